"""What the gallery (docs/results/gallery.md) says of each figure image: its alt text (what it shows) and
its one-line finding. docs/hooks.py builds the page from the figure registry, so a figure registered later
appears there with its registry description until it gets an entry here."""

from __future__ import annotations

__all__ = ["FIGURE_TEXT"]

#: PNG stem -> (alt text: what the image shows, the one-line finding; both Markdown, formulas as $...$).
FIGURE_TEXT: dict[str, tuple[str, str]] = {
    "predictions": (
        "Two log-log panels: the predicted iterations of every lower bound and every upper bound of the "
        "catalog against the spectral gap 1 - lambda, at fixed problem constants",
        "What the catalog predicts, not a measurement: every bound's iterations against the spectral gap "
        "$1 - \\lambda$ at one set of constants, lower and upper bounds side by side."),
    "gossip": (
        "Panels comparing the spectral gaps of the weight rules (Metropolis, max-degree, FDLA, FMMC) on "
        "path, ring, Erdos-Renyi and hypercube graphs, and the disagreement after R rounds of plain, "
        "accelerated and Chebyshev gossip on the path",
        "FMMC widens the spectral gap over Metropolis 1.5× on the path and ring and 1.9× on Erdős–Rényi "
        "graphs; Alg. 3 started as printed first expands disagreement (7.5× at $R = 10$)."),
    "communication": (
        "Log-log plots of the iterations to epsilon against the number of workers n on Cor. 2's path for "
        "DeTAG, D2, DSGT, D-PSGD, DeFacto and centralized SGD, beside the explicit lower bound, and against "
        "the diameter on Thm 1's broom",
        "DeTAG's $T_\\varepsilon$ grows as $n^{0.99}$ on the path, the optimal "
        "$1/\\sqrt{1-\\lambda} \\propto n$; "
        "D-PSGD and DSGT grow far slower than Table 2's $n^5$–$n^7$, and no run beats the lower bound."),
    "sampling": (
        "Log-log plots of the median iterations to epsilon over 16 seeds against the noise sigma squared "
        "and against nB on the Setting 1 instance, with interquartile bars, beside the lower bound",
        "The sampling term measured: slopes $1.01$ in $\\sigma^2$ and $-1.02$ in $nB$, against the "
        "predicted $+1$ and $-1$."),
    "spectral_gap": (
        "Log-log plots of the iterations to epsilon against 1/(1 - lambda) through the lazy matrix W_kappa "
        "on a 12-node path, for DeTAG, DSGT, D-PSGD and D2, at the average and at the workers",
        "DeTAG grows as $(1-\\lambda)^{-0.54}$, just above Cor. 6's $0.5$; DSGT and D-PSGD near $0.8$, D² "
        "near $0.3$ on a lazy $W$."),
    "heterogeneity": (
        "Training-loss curves of the digits MLP on an 8-worker ring for D-PSGD, DeTAG, D2, DSGT, GT-DSGD and "
        "centralized SGD as the data go from 100% to 0% shuffled, with and without momentum",
        "The paper's Figure 2 reproduced: D-PSGD's final loss rises from 0.039 to 0.146 as the data get "
        "less shuffled, while DeTAG and D² stay near centralized SGD."),
    "heterogeneity_sparse": (
        "The same training-loss curves on the sparser lazy ring (kappa = 0.05)",
        "On the sparser ring the gap widens: at 0% shuffled D-PSGD ends at 0.76 against D²'s 0.20 and "
        "centralized SGD's 0.019."),
    "time_varying": (
        "Log-log plots of the iterations to epsilon against n on the static exponential graph, the one-peer "
        "exponential schedule and the ring, each beside its hop-count bound, and consensus rounds of plain "
        "and accelerated gossip against 1/(1 - lambda)",
        "On exponential graphs, static or one-peer, $T_\\varepsilon$ does not grow with $n$; accelerated "
        "gossip keeps its $\\sqrt{\\cdot}$ gain on a random schedule once $\\eta$ follows the effective "
        "$\\lambda$."),
    "compression": (
        "Log-log plots of the iterations and of the bits each worker sends to reach epsilon against the "
        "compression factor 1/delta for CHOCO-SGD and BEER, beside uncompressed D-PSGD, DSGT and DeTAG",
        "BEER with top-$k$ sends fewer bits to $\\varepsilon$ as $1/\\delta$ grows (slope $-0.54$) while "
        "needing more iterations; random-$k$ saves no bits."),
    "worst_case": (
        "The exact worst case of the squared gradient norm over the function class, computed by performance "
        "estimation, against the gossip rounds and against 1 - lambda for D-PSGD, DSGT, EXTRA, D2 and "
        "DeTAG, beside each method's catalog rate and the gossip lower bound",
        "The catalog's rates grow far faster in $\\lambda$ than the computed worst cases (D-PSGD: 400× "
        "against 3.3×), and the gossip lower bound lies below every worst case."),
    "worst_case_linear": (
        "The worst distance to the minimizer over strongly convex functions, and the per-iteration linear "
        "rate read off it, against 1 - lambda for the decentralized methods",
        "EXTRA's worst-case rate stays within 4% of gradient descent's $1 - \\alpha\\mu = 0.875$ up to "
        "$\\lambda = 0.9$; DIGing/DSGT's passes 1 from $\\lambda = 0.8$: some $W$ of the class makes it "
        "diverge."),
    "time": (
        "Log-log plots of the simulated seconds to epsilon of D-PSGD, DeTAG, Fragile SGD, Amelie SGD and "
        "asynchronous SGD on clusters with uneven compute and link times, beside the time lower bound, on "
        "the zero-chain instance and the digits problem",
        "The iteration-optimal synchronous methods pay for the slowest worker every iteration: with one "
        "worker 1000× slower D-PSGD needs 44,000 s, Fragile SGD 90 s and asynchronous SGD 12.8 s."),
}
