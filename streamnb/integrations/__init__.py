"""Integrations: streamnb's models inside other libraries' frameworks.

``river`` wraps the models as river classifiers and transformers (``learn_one``,
``predict_proba_one``, pipelines, ``check_estimator``); ``distributed`` trains one model per
partition of a Dask bag or dataframe and merges them. Each needs its optional extra (river,
dask); they import the library (the base modules, ``streamnb.features``, ``streamnb.models``)
and nothing imports them.
"""
