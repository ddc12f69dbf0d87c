"""Tables where people and bots play each other online (``battlejudge serve --tables``):
the store (:mod:`.store`, :mod:`.pgstore`), the games' work run in worker processes
(:mod:`.work`) and the service that keeps tables live (:mod:`.room`)."""
