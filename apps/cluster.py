"""Self-play and tournaments on a Ray cluster (``--cluster ray`` or ``ray://HOST:PORT``).

The driver (this process) sends games to Ray tasks and gets back what each game gives
(:class:`~battlejudge.engines.selfplay.PlayedGame`, or a tournament game's winner); the
tasks never write a file or the log. The driver commits the claims and writes the
records in game order, exactly as a local run does, so a run gives the same results,
records and proof-log claims whatever plays its games.

Games go in chunks (one task plays a few games, so Ray's per-task cost stays small beside
the games), with two chunks per worker in flight (a 100,000-game run does not submit
100,000 tasks at once). A worker that dies takes its chunk with it: Ray reruns the task
(``max_retries``), and if Ray gives up, the chunk is submitted again here; a chunk's
results are kept once, by its index, so no game is lost or counted twice.

Ray is the optional extra ``cluster``; it is imported only when a cluster is asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from battlejudge.solver.errors import InputError, missing_extra

_logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

LOCAL = "local"
RESUBMITS = 3
"""How many times a chunk is submitted again after Ray gave up on it."""


def check_cluster(cluster: str) -> str:
    """``cluster`` if it is ``local``, ``ray`` or ``ray://HOST:PORT``; else
    :class:`InputError` naming it."""
    if cluster in (LOCAL, "ray"):
        return cluster
    if cluster.startswith("ray://"):
        host, sep, port = cluster.removeprefix("ray://").rpartition(":")
        if host and sep and port.isdigit():
            return cluster
    raise InputError(f"--cluster must be local, ray or ray://HOST:PORT, got {cluster!r}")


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        error = missing_extra(e)
        if error is None:
            raise
        raise error from None
    return ray


def connect(cluster: str) -> Any:
    """Join the Ray cluster ``cluster`` names (``ray``: the running local cluster if there
    is one, else a new one; ``ray://HOST:PORT``: a remote cluster through Ray Client) and
    return the ``ray`` module. Already connected: the connection is kept. Without Ray
    installed, :class:`~battlejudge.solver.errors.MissingExtraError` names the extra."""
    ray = _import_ray()
    if not ray.is_initialized():
        address = None if cluster == "ray" else cluster
        try:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        except ConnectionError as e:
            raise InputError(
                f"--cluster {cluster}: cannot connect ({e}); see docs/cluster.md"
            ) from None
    return ray


def _play_chunk(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """What a Ray task runs: one chunk of games, in order."""
    return [fn(item) for item in items]


class RayMapper:
    """Plays a function over items on Ray, yielding the results in the items' order, each
    once (see the module for chunks, retries and resubmission). Two chunks per worker are
    in flight, so a worker never waits for the driver between chunks. ``workers`` (None:
    every CPU of the cluster) bounds how many chunks run at once on a node: each task then
    asks for that share of the largest node's CPUs. ``retries`` is how many times Ray reruns
    a task whose worker died, before the driver submits it again."""

    def __init__(
        self, ray: Any, workers: int | None = None, chunk: int | None = None, retries: int = 3
    ) -> None:
        self.ray = ray
        cpus = int(ray.cluster_resources().get("CPU", 1))
        node_cpus = max(
            (n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")), default=1
        )
        self.in_flight = 2 * (workers if workers is not None else max(1, cpus))
        self.chunk = chunk
        share = 1.0 if workers is None else max(1.0, node_cpus / workers)
        self._task = ray.remote(num_cpus=share, max_retries=retries)(_play_chunk)

    def __call__(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """The results of ``fn`` over ``items``, in order, each exactly once."""
        items = list(items)
        size = self.chunk or max(1, min(16, len(items) // (4 * self.in_flight) or 1))
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        ray = self.ray
        fn_ref = ray.put(fn)
        pending: dict[Any, int] = {}  # object ref -> chunk index
        attempts = [0] * len(chunks)
        done: dict[int, list[R]] = {}
        submitted = 0  # the next chunk to submit
        yielded = 0  # the next chunk to yield
        while yielded < len(chunks):
            while submitted < len(chunks) and len(pending) < self.in_flight:
                pending[self._task.remote(fn_ref, chunks[submitted])] = submitted
                submitted += 1
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                k = pending.pop(ref)
                try:
                    results = ray.get(ref)
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as e:
                    attempts[k] += 1
                    if attempts[k] > RESUBMITS:
                        raise
                    _logger.warning("chunk %d lost with its worker (%s); submitting again", k, e)
                    pending[self._task.remote(fn_ref, chunks[k])] = k
                    continue
                done.setdefault(k, results)  # a chunk counts once
            while yielded in done:
                yield from done.pop(yielded)
                yielded += 1


def mapper(cluster: str, workers: int | None = None) -> Any:
    """The function that plays a run's games for ``--cluster``: None for ``local`` (the
    engines play them here), else a :class:`RayMapper` on the cluster named."""
    if check_cluster(cluster) == LOCAL:
        return None
    return RayMapper(connect(cluster), workers)
