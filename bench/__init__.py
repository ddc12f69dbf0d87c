"""Benchmarks and measurements: what ``battlejudge bench ...`` runs, and the experiments
behind the figures in the docs. Layered above the applications (it starts services and
bots to time them) and below the command line, which only parses options and prints."""
