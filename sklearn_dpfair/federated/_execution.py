# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Where the silos run: in this process, or as actors on a Dask cluster.

Both executions expose the same two calls to the round loop:
``messages(model, round_index)`` (broadcast the model, collect one
:class:`SiloMessage` per silo) and ``reports()`` (collect each silo's public
:class:`SiloReport`). The silo code is the same :class:`SiloWorker` in both,
so a seed gives the same messages, bit for bit, in both.

Dask execution places each silo's rows once on one worker, where its
:class:`SiloWorker` holds them for the whole fit (inside one
:class:`SiloHost` actor per worker). Per round only the model travels to the
workers and only the messages travel back. Note that
Dask is not a security boundary: whoever holds the client can run code on
the workers. It shows the data flow of a deployment, not its isolation.
"""

from ._silo import SiloWorker

__all__ = ["DaskExecution", "LocalExecution", "SiloHost", "make_execution"]

_DASK_MISSING = (
    "execution='dask' needs dask.distributed, an optional dependency: install "
    "it with `pip install 'sklearn-dpfair[dask]'`."
)
_NO_CLIENT = (
    "execution='dask' needs a running dask.distributed Client: create one "
    "(for example `client = Client(LocalCluster())`) before calling fit: the "
    "estimators use the current default client. The function fit_federated "
    "also takes it as client=."
)


class SiloHost:
    """The silos that live in one process: one Dask actor, or all of them locally.

    Grouping the silos of a worker behind one actor makes a round cost one
    call per worker instead of one per silo; each silo is still its own
    :class:`SiloWorker` with its own rows, budget and generator.
    """

    def __init__(self, silo_kwargs):
        self._silos = {sid: SiloWorker(**kw) for sid, kw in silo_kwargs.items()}

    def messages(self, model, round_index):
        """One message from every silo of this host, in the host's order."""
        return [s.message(model, round_index) for s in self._silos.values()]

    def reports(self):
        """The public report of every silo of this host."""
        return {sid: s.report() for sid, s in self._silos.items()}


class LocalExecution:
    """All silos in this process (simulation; the default)."""

    name = "local"

    def __init__(self, silo_kwargs):
        self._host = SiloHost(silo_kwargs)

    def messages(self, model, round_index):
        return self._host.messages(model, round_index)

    def reports(self):
        return self._host.reports()

    def close(self):
        self._host = None


class DaskExecution:
    """The silos as actors on ``dask.distributed`` workers, one host per worker."""

    name = "dask"

    def __init__(self, silo_kwargs, client):
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise ValueError("the Dask client has no workers.")
        self._client = client
        self._order = list(silo_kwargs)
        # Round-robin placement of the silos over the workers.
        self.placement = {
            sid: workers[j % len(workers)] for j, sid in enumerate(silo_kwargs)
        }
        per_worker = {}
        scattered = []
        self._futures = []
        try:
            for sid, kw in silo_kwargs.items():
                address = self.placement[sid]
                kw = dict(kw)
                # Rows go straight to their worker, once; the silo keeps them.
                kw["X"], kw["y"] = client.scatter(
                    [kw["X"], kw["y"]], workers=[address], hash=False
                )
                scattered += [kw["X"], kw["y"]]
                per_worker.setdefault(address, {})[sid] = kw
            self._futures = [
                client.submit(
                    SiloHost,
                    kwargs,
                    actor=True,
                    workers=[address],
                    allow_other_workers=False,
                    pure=False,
                )
                for address, kwargs in per_worker.items()
            ]
            # The silos' privacy was resolved on the driver; what a worker can
            # still refuse (non-finite rows, a set-up made for other rows)
            # surfaces here.
            self._hosts = [f.result() for f in self._futures]
        except BaseException:
            # A silo that refused its rows: no silo's rows stay on a worker.
            client.cancel(self._futures + scattered)
            self._futures, self._hosts = [], []
            raise
        finally:
            per_worker.clear()
            scattered.clear()

    def messages(self, model, round_index):
        pending = [h.messages(model, round_index) for h in self._hosts]
        by_silo = {m.silo_id: m for p in pending for m in p.result()}
        return [by_silo[sid] for sid in self._order]

    def reports(self):
        pending = [h.reports() for h in self._hosts]
        merged = {}
        for p in pending:
            merged.update(p.result())
        return {sid: merged[sid] for sid in self._order}

    def close(self):
        # Cancelling the actor futures deletes the actors, and with them the
        # silos' rows, on the workers (actor proxies keep references alive,
        # so dropping ours would not be enough).
        futures, self._futures, self._hosts = self._futures, [], []
        self._client.cancel(futures)


def make_execution(execution, silo_kwargs, client=None):
    """Start the silos of a fit where ``execution`` says.

    Parameters
    ----------
    execution : {"local", "dask"}
        In-process silos, or Dask actors.
    silo_kwargs : dict
        Silo id to the keyword arguments of its :class:`SiloWorker`.
    client : distributed.Client, default=None
        Dask client; None uses the current one.

    Returns
    -------
    execution : LocalExecution or DaskExecution
        The running silos.
    """
    if execution == "local":
        return LocalExecution(silo_kwargs)
    if execution != "dask":
        raise ValueError(f"execution must be 'local' or 'dask'; got {execution!r}.")
    return DaskExecution(silo_kwargs, dask_client(client))


def dask_client(client=None):
    """``client``, or the running Dask client; refused where there is none.

    Reads no data: a fit checks it in its plan, before any silo reads a row.
    """
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(_DASK_MISSING) from exc
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError as exc:
            raise ValueError(_NO_CLIENT) from exc
    return client
