"""Questions, encodings, solver backends, certificates and explanations.

This layer imports no other battlejudge layer. Game folders live below it
(``battlejudge.solver.battleline``).
"""
