"""bounds: the T_eps side of the paper — symbolic lower bounds, the rate catalog and predicted complexity.

Lu & De Sa, "Optimal Complexity in Decentralized Training" (ICML 2021; JMLR 24(93) 2023).
Imports nothing from the other decbounds packages.
"""
