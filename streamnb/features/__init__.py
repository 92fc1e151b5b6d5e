"""Features: what a document becomes before it is counted.

The tokenizers and weightings a model reads its documents with, each a thin Python face over
the Rust core's readers: ``text`` (words and n-grams of plain text: ``Tokenizer``, and
``OnlineTfidf``), ``email`` (a raw message -> prefixed header, body and URL features:
``EmailTokenizer``), ``weighting`` (those features weighted field by field: ``EmailWeights``)
and ``ngrams`` (hashed byte n-grams of a message's head: ``ByteNgrams``). They sit on the base
modules (``streamnb.errors``, ``streamnb.validate``, ``streamnb._core``) and import nothing of
the models, the filter, the service or the integrations.
"""
