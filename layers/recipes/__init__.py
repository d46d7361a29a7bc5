"""The recipes of ``layers/make_layers.py``: one module per municipality, per source kind.

:mod:`.common` holds what every recipe shares (the grid, the notes every file carries,
the writers with their pinned bytes), :mod:`.terrain` the pieces a synthetic surface is
made of (smoothed lines, noise, valleys, ditches, a kettle). Each public schema has a
module that fills it: :mod:`.nhd` (NHDFlowline, NHDWaterbody), :mod:`.nfhl`
(``S_FLD_HAZ_AR``), :mod:`.wwi` (Wisconsin Wetland Inventory), :mod:`.ssurgo`
(``soilmu_a``) and :mod:`.tiger` (road centrelines); :mod:`.places` reads the real
Census TIGER/Line places (a village's limits, its neighbours, the town land between).
:mod:`.deerfield` and :mod:`.somers` put them together into one municipality's folder each.
"""
