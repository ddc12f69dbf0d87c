"""Benchmarks and measurements: what ``battlejudge bench ...`` runs, and the experiments
behind the figures in the docs. Layered above the applications (it starts services and
bots to time them) and below the command line, which only parses options and prints.

One module per thing measured, each figure beside a baseline from the same run:
:mod:`.claims` (the claim decider against brute force), :mod:`.serve` (the HTTP service),
:mod:`.attack` (the service under attack), :mod:`.log` and :mod:`.log_tiles` (the proof log
under the service), :mod:`.web` (the claim checker in Chromium), :mod:`.audit`,
:mod:`.selfplay` (also on Ray), :mod:`.startup` (whole commands), :mod:`.battleplan` (its
threats question), :mod:`.bots` (seconds and memory per move), :mod:`.calibration` (how well
the expert's leaf foretells the game) and :mod:`.guide` (the rules guide's accuracy).
Shared devices: :mod:`.raw_http` (the load generators' HTTP client) and
:mod:`.synthetic_log` (large proof logs to time the audit on)."""
