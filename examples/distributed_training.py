"""Train a spam filter on a Dask cluster, then check it equals single-process training.

The SpamAssassin corpus is read on this machine, in Date order, and split: the first 80%
trains, the last 20% tests. The training messages are cut into partitions and scattered
to the workers; each worker tokenizes and learns its partitions, and the partition models
are merged up a tree into one ordinary streamnb model. The model then classifies the test
messages on the cluster, learns them too (``streamnb.integrations.distributed.learn``), and is compared
with the same model trained in this process.

    python examples/distributed_training.py [--corpus PATH] [--scheduler ADDRESS]
                                            [--workers 2] [--partitions 16] [--model bernoulli]

Without ``--scheduler``, a LocalCluster of ``--workers`` processes (one thread each) is
started here. With ``--scheduler tcp://host:8786`` the cluster is yours: its workers need
streamnb installed (``pip install streamnb[dask]``), and the tokenizer is sent to them.
The corpus path defaults to $STREAMNB_SPAMASSASSIN.
"""

from __future__ import annotations

import argparse
import logging
import time

import dask.bag as db
import dask.dataframe as dd
import pandas as pd
from distributed import Client, LocalCluster

from streamnb import BernoulliNB, MultinomialNB, Tokenizer
from streamnb.filter.datasets import load_spamassassin
from streamnb.integrations import distributed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="corpus folder or archive (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (default: start a LocalCluster)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    parser.add_argument("--partitions", type=int, default=16, help="partitions of the training set (default 16)")
    parser.add_argument("--model", choices=["multinomial", "bernoulli"], default="multinomial")
    args = parser.parse_args(argv)

    messages = load_spamassassin(args.corpus)
    records = [(m.raw.decode("latin-1"), m.label) for m in messages]
    cut = int(len(records) * 0.8)
    train_records, test_records = records[:cut], records[cut:]
    model_class = {"multinomial": MultinomialNB, "bernoulli": BernoulliNB}[args.model]
    template = model_class(alpha=1.0, tokenizer=Tokenizer())

    if args.scheduler:
        client, cluster = Client(args.scheduler), None
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    try:
        print(f"cluster: {client}")
        # Scattering puts the partitions in worker memory directly, instead of in the task graph.
        # The futures must stay referenced until the computation is over: the cluster drops
        # scattered data nobody holds.
        size = -(-len(train_records) // args.partitions)
        parts = [train_records[i:i + size] for i in range(0, len(train_records), size)]
        futures = client.scatter(parts)
        bag = db.from_delayed(futures)

        start = time.perf_counter()
        model = distributed.train(template, bag, split_every=4, scheduler=client)
        seconds = time.perf_counter() - start
        print(f"trained on {len(train_records)} messages in {bag.npartitions} partitions: {seconds:.2f} s "
              f"({len(train_records) / seconds:,.0f} msg/s); |V| = {model.n_features}, classes {model.class_counts}")

        texts = pd.DataFrame({"text": [text for text, _ in test_records],
                              "label": [label for _, label in test_records]})
        test = dd.from_pandas(texts, npartitions=args.workers * 2)
        predicted = distributed.predict(model, test, client=client).compute(scheduler=client)
        truth = texts["label"]
        accuracy = (predicted["prediction"] == truth).mean()
        ham_as_spam = ((predicted["prediction"] == "spam") & (truth == "ham")).sum()
        spam_as_ham = ((predicted["prediction"] == "ham") & (truth == "spam")).sum()
        print(f"held-out (last 20% by date, {len(texts)} messages): accuracy {accuracy:.4f}, "
              f"ham marked spam {ham_as_spam}, spam missed {spam_as_ham}")

        distributed.learn(model, test, scheduler=client)
        print(f"after learning the held-out part as well: {sum(model.class_counts.values()):.0f} messages, "
              f"|V| = {model.n_features}")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    local = model_class(alpha=1.0, tokenizer=template.tokenizer)
    local.learn_many([text for text, _ in records], [label for _, label in records])
    same = (local.class_counts == model.class_counts and local.n_features == model.n_features
            and all(local.predict_one(text) == model.predict_one(text) for text, _ in test_records[:200]))
    print(f"equal to single-process learn_many on all {len(records)} messages: {same}")


if __name__ == "__main__":
    main()
