"""The community Battle Line bot protocol (docs/protocol.md): one text message per line on
a bot's stdin and stdout.

- :mod:`.messages`: the messages, a lenient parser and a canonical printer;
- :mod:`.referee`: games between two bot programs (subprocesses) speaking the protocol,
  with claims decided and certified by the solver (``battlejudge referee``);
- :mod:`.client`: our bots as protocol clients on stdin/stdout (``battlejudge bot``).

The rules are the engine's (:mod:`battlejudge.engines.battleline`); this package only
translates between its states and the protocol's lines, and runs the processes.
"""
