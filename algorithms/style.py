"""`PlotStyle`, how figures draw an algorithm: a leaf module (it imports nothing of decbounds), so that
`algorithms.step_rule` can give every rule a style without importing the registry (the import circle
engine -> step_rule -> registry -> plugins)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["PlotStyle"]


@dataclass(frozen=True)
class PlotStyle:
    """How figures draw an algorithm: matplotlib's ``color``, ``marker``, ``linestyle`` and the ``label``.

    Parameters
    ----------
    color, marker : str
        Any matplotlib color and marker.
    label : str
        The legend text.
    linestyle : str, default "-"
        A matplotlib line style.

    Examples
    --------
    >>> PlotStyle("tab:gray", "o", "averaging").as_dict()
    {'color': 'tab:gray', 'marker': 'o', 'label': 'averaging', 'linestyle': '-'}
    """

    color: str
    marker: str
    label: str
    linestyle: str = "-"

    def as_dict(self) -> dict[str, str]:
        """The matplotlib keywords (color, marker, linestyle, label).
        """
        return asdict(self)
