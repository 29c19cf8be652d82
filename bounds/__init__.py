"""bounds: the T_eps side of the paper — symbolic lower bounds, the rate catalog and predicted complexity.

Lu & De Sa, "Optimal Complexity in Decentralized Training" (ICML 2021; JMLR 24(93) 2023).
Imports nothing from the other decbounds packages. The computed worst cases (PEP) are
``decbounds.pep`` (``bounds.worst_case`` is a deprecated alias).

>>> from decbounds import bounds
>>> rate = bounds.get("detag")
>>> values = dict(Delta=1, L=1, sigma=1, varsigma0=1, n=16, B=1, epsilon=0.01, lam=0.95)
>>> bounds.dominant_term("detag", **values)
'sampling'
>>> round(bounds.gap("detag", **values), 3)
1.045
"""

from typing import TYPE_CHECKING

from decbounds.lazy_exports import lazy_exports

if TYPE_CHECKING:  # the names below are imported on first use (`__getattr__`): ``--help`` needs no sympy
    from decbounds.bounds.catalog import (
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

#: Each public name -> the module that defines it, imported when the name is first read.
_EXPORTS: dict[str, str] = {
    "CENTRALIZED_SGD_AFTER_T": "catalog",
    "COR2_INSTANCE_VARSIGMA0": "catalog",
    "PATH_HOP_DISTANCE": "catalog",
    "RATES": "catalog",
    "SETTING1_CHAIN_LENGTH": "catalog",
    "SETTING1_REVEAL_PROBABILITY": "catalog",
    "SETTING1_REVEAL_PROBABILITY_SHARP": "catalog",
    "SETTING2_CHAIN_LENGTH": "catalog",
    "dominant_term": "catalog",
    "gap": "catalog",
    "get": "catalog",
    "names": "catalog",
    "path_hop_distance": "catalog",
    "register_rate": "catalog",
    "setting1_chain_length": "catalog",
    "setting1_reveal_probability": "catalog",
    "setting2_chain_length": "catalog",
    "unregister_rate": "catalog",
    "SETTING1_CHAIN_DENOMINATOR": "constants",
    "SETTING2_CHAIN_DENOMINATOR": "constants",
    "ZERO_CHAIN_GRAD_INF": "constants",
    "ZERO_CHAIN_RANGE": "constants",
    "ZERO_CHAIN_SMOOTHNESS": "constants",
    "chain_length": "constants",
    "smallest_range": "constants",
    "accelerated_gossip_eta": "detag_params",
    "accelerated_gossip_rho": "detag_params",
    "detag_phase_length": "detag_params",
    "detag_step_size": "detag_params",
    "Prediction": "prediction",
    "predict_at": "prediction",
    "CONVENTIONS": "rate",
    "KINDS": "rate",
    "STATUSES": "rate",
    "Rate": "rate",
    "RATE_SYMBOLS": "symbols",
    "TIME_BOUNDS": "time_bounds",
    "TimeBound": "time_bounds",
    "TimedCluster": "time_bounds",
    "equilibrium_time": "time_bounds",
    "level_game_times": "time_bounds",
    "time_lower_bound": "time_bounds",
}

__all__ = [
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
]


#: Deprecated names (until 0.4), each read with a DeprecationWarning: ``CATALOG`` is the second name the
#: rate registry had (`RATES` is the one); the computed worst cases moved to ``decbounds.pep`` (they compile
#: step rules, so they sit above ``algorithms``).
_DEPRECATED: dict[str, tuple[str, str, str]] = {
    "CATALOG": (".catalog", "_RATE_VIEW", "decbounds.bounds.CATALOG is deprecated: the rate registry is "
                "bounds.RATES (RATES.objects() is the name -> Rate view, bounds.get(name) one rate); the "
                "alias goes in 0.4"),
    **{name: ("decbounds.pep", name, f"decbounds.bounds.{name} moved to decbounds.pep.{name}; the alias "
              "goes in 0.4") for name in ("WorstCase", "worst_case", "worst_gossip_matrix")},
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), deprecated=_DEPRECATED)
