"""paper_figures: sweeps, T_eps measurement, exponent fits and one script per figure.

The only package that imports all the others; nothing imports it. Outputs land in ``paper_figures/out/``.
"""

__all__: list[str] = []  # the figures are its submodules: python -m decbounds.paper_figures.<figure>
