"""TR-55's worked examples as submission.toml inputs, shared by the engineering tests.

Source: USDA NRCS, Urban Hydrology for Small Watersheds, TR-55 (2nd ed., June 1986).
"""

from __future__ import annotations

from georeview.units import SQFT_PER_ACRE

#: The 250-acre watershed of examples 2-2, 3-1 and 4-1, sq ft.
ACRES_250_SQFT = 250 * SQFT_PER_ACRE

#: Example 2-2 (p. 2-11, figure 2-6) cover table: 1/2-acre lots on 75 ac B and 100 ac C
#: soils, open space in good condition on 75 ac C; Table 2-2a CN 70, 80 and 74.
EXAMPLE_2_2 = [
    {"cover": "residential_1_2_acre", "hsg": "B", "acres": 75},
    {"cover": "residential_1_2_acre", "hsg": "C", "acres": 100},
    {"cover": "open_space_good", "hsg": "C", "acres": 75},
]

#: Example 3-1 (p. 3-5, figure 3-3): the Dyer County flow path, P2 = 3.6 in; travel times
#: 0.30, 0.24 and 0.99 h, Tc 1.53 h.
EXAMPLE_3_1 = [
    {"kind": "sheet", "length_ft": 100, "slope_pct": 1.0, "surface": "grass_dense"},
    {"kind": "shallow", "length_ft": 1400, "slope_pct": 1.0, "surface": "unpaved"},
    {
        "kind": "channel",
        "length_ft": 7300,
        "slope_pct": 0.5,
        "n": 0.05,
        "area_sqft": 27,
        "wetted_perimeter_ft": 28.2,
    },
]
