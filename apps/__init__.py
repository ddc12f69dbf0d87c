"""Applications over the rules packages: the HTTP claim service, the community bot
protocol (referee and our bots as clients), the audit of refereed games and the rules
guide. Servers, subprocesses and data files live here, never in ``engines/`` (which holds
rules, notation and bots only). May import solver, proofs and engines; only cli and
examples import it."""
