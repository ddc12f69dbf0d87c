"""Certificate files, proof logs, verification and audit. Imports the solver layer only."""
