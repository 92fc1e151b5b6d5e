"""The service: the ``streamnb`` command and the spamd-compatible server.

``cli`` is the command line (train, classify, learn, unlearn, evaluate, inspect, demo,
serve; the console script ``streamnb`` and ``python -m streamnb``; its commands grouped in
``cli_model`` and ``cli_evaluate``, on ``cli_common`` and ``cli_options``), ``serve`` the
server that speaks SpamAssassin's spamd protocol to ``spamc`` (made of ``protocol``,
``replies``, ``userfiles``, ``users`` and ``server``), ``settings`` the server's settings
and limits with their defaults (their one home: the server and the command's options both
read them there), and ``journal`` a model file's write lock and the journal of lessons the
server acknowledges before folding them into the file. The service imports the filter and
the library; nothing below imports it. ``cli`` imports what a command needs when it runs,
so ``streamnb classify`` starts without numpy.
"""
