"""algorithms: the class A — DeTAG, DeFacto and the baselines as small step rules on one vectorized engine."""
