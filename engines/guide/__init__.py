"""The offline rules guide for every game battlejudge knows (issue 5)."""
