"""The spam filter: the application built on the library's models.

``decision`` turns a model's scores into verdicts: it re-exports the modules that do it,
``combining`` (chi-square combining), ``rules`` (the log-odds rule, the unsure band ...),
``evidence``, ``spam_filter`` (``SpamFilter``) and ``report`` (its progressive report), over
``base`` (the verdicts, the model protocol). ``calibrate`` maps scores to probabilities,
``evaluate`` holds the prequential evaluation (its metrics in ``metrics``, ``scores``
and ``running``, re-exported), ``plots`` draws them (matplotlib, optional), ``sources`` reads
Maildirs, mbox files and labelled data files, ``datasets`` (with ``download`` and
``worked_examples``, re-exported) and ``trec`` load the SpamAssassin and TREC 2007 corpora,
and ``headers`` writes a verdict into a message's headers. It imports the library (the base
modules, ``streamnb.features``, ``streamnb.models``), never the service or the integrations.
"""
