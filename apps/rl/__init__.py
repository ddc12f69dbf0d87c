"""The five games for reinforcement-learning and game-theory toolkits.

:mod:`.encoding` numbers every game's actions densely (OpenSpiel's and PettingZoo's
integer action space), :mod:`.observations` gives each player's view as a tensor, and
:mod:`.specs` ties them to the games' registry entries. None of these imports OpenSpiel
or PettingZoo: only :mod:`.openspiel_games` and :mod:`.pettingzoo_envs` do (the ``rl``
extra), and the public modules ``battlejudge.openspiel`` and ``battlejudge.pettingzoo``
load them.
"""
