"""bounds: the T_eps side of the paper — symbolic lower bounds, the rate catalog and predicted complexity.

Lu & De Sa, "Optimal Complexity in Decentralized Training" (ICML 2021; JMLR 24(93) 2023).
Imports nothing from the other decbounds packages.

>>> from decbounds import bounds
>>> rate = bounds.get("detag")
>>> values = dict(Delta=1, L=1, sigma=1, varsigma0=1, n=16, B=1, epsilon=0.01, lam=0.95)
>>> bounds.dominant_term("detag", **values)
'sampling'
>>> round(bounds.gap("detag", **values), 3)
1.045
"""

from decbounds.bounds.catalog import (
    CATALOG,
    CENTRALIZED_SGD_AFTER_T,
    COR2_INSTANCE_VARSIGMA0,
    PATH_HOP_DISTANCE,
    RATES,
    SETTING1_CHAIN_LENGTH,
    SETTING1_REVEAL_PROBABILITY,
    SETTING1_REVEAL_PROBABILITY_SHARP,
    SETTING2_CHAIN_LENGTH,
    dominant_term,
    gap,
    get,
    names,
    path_hop_distance,
    register_rate,
    setting1_chain_length,
    setting1_reveal_probability,
    setting2_chain_length,
    unregister_rate,
)
from decbounds.bounds.constants import (
    SETTING1_CHAIN_DENOMINATOR,
    SETTING2_CHAIN_DENOMINATOR,
    ZERO_CHAIN_GRAD_INF,
    ZERO_CHAIN_RANGE,
    ZERO_CHAIN_SMOOTHNESS,
    chain_length,
    smallest_range,
)
from decbounds.bounds.detag_params import (
    accelerated_gossip_eta,
    accelerated_gossip_rho,
    detag_phase_length,
    detag_step_size,
)
from decbounds.bounds.pep import WorstCase, worst_case, worst_gossip_matrix
from decbounds.bounds.prediction import Prediction, predict_at
from decbounds.bounds.rate import CONVENTIONS, KINDS, STATUSES, Rate
from decbounds.bounds.symbols import RATE_SYMBOLS
from decbounds.bounds.time_bounds import (
    TIME_BOUNDS,
    TimeBound,
    TimedCluster,
    equilibrium_time,
    level_game_times,
    time_lower_bound,
)

__all__ = [
    "CATALOG",
    "CENTRALIZED_SGD_AFTER_T",
    "CONVENTIONS",
    "COR2_INSTANCE_VARSIGMA0",
    "KINDS",
    "PATH_HOP_DISTANCE",
    "RATES",
    "RATE_SYMBOLS",
    "SETTING1_CHAIN_DENOMINATOR",
    "SETTING1_CHAIN_LENGTH",
    "SETTING1_REVEAL_PROBABILITY",
    "SETTING1_REVEAL_PROBABILITY_SHARP",
    "SETTING2_CHAIN_DENOMINATOR",
    "SETTING2_CHAIN_LENGTH",
    "STATUSES",
    "TIME_BOUNDS",
    "ZERO_CHAIN_GRAD_INF",
    "ZERO_CHAIN_RANGE",
    "ZERO_CHAIN_SMOOTHNESS",
    "Prediction",
    "Rate",
    "TimeBound",
    "TimedCluster",
    "WorstCase",
    "accelerated_gossip_eta",
    "accelerated_gossip_rho",
    "chain_length",
    "detag_phase_length",
    "detag_step_size",
    "dominant_term",
    "equilibrium_time",
    "gap",
    "get",
    "level_game_times",
    "names",
    "path_hop_distance",
    "predict_at",
    "register_rate",
    "setting1_chain_length",
    "setting1_reveal_probability",
    "setting2_chain_length",
    "smallest_range",
    "time_lower_bound",
    "unregister_rate",
    "worst_case",
    "worst_gossip_matrix",
]
