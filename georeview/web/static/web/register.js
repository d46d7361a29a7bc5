/* The register map: the villages' limits and every case's site, coloured by status. */
(function () {
  "use strict";
  var el = document.getElementById("register-map");
  if (!el || !window.L) { return; }
  var colours = { received: "#9a6700", under_review: "#9a6700", returned: "#d4a72c",
    approved: "#1a7f37", approved_with_conditions: "#2da44e", disapproved: "#b3261e",
    permit_issued: "#0969da", closed: "#6e7781", withdrawn: "#afb8c1" };
  var map = L.map(el, { preferCanvas: true });
  var get = function (url) { return fetch(url, { credentials: "same-origin" }).then(function (r) { return r.json(); }); };
  Promise.all([get(el.dataset.limits), get(el.dataset.sites)]).then(function (both) {
    var limits = L.geoJSON(both[0], {
      style: { color: "#17324d", weight: 2, fillColor: "#dbe7f3", fillOpacity: 0.35 },
      onEachFeature: function (f, lyr) { var t = document.createElement("span"); t.textContent = f.properties.name || ""; lyr.bindTooltip(t); }
    }).addTo(map);
    var sites = L.geoJSON(both[1], {
      pointToLayer: function (f, ll) {
        return L.circleMarker(ll, { radius: 8, weight: 1, color: "#1d2733", fillOpacity: 0.9,
          fillColor: colours[f.properties.status] || "#6e7781" });
      },
      onEachFeature: function (f, lyr) {
        var p = f.properties, div = document.createElement("div"), a = document.createElement("a");
        a.href = p.url; a.textContent = p.number; div.appendChild(a);
        div.appendChild(document.createTextNode(" " + p.status.replace(/_/g, " ") + ": " + p.title + " (" + p.applicant + ")"));
        lyr.bindPopup(div);
      }
    }).addTo(map);
    var bounds = both[1].features.length ? sites.getBounds().pad(0.3) : limits.getBounds();
    if (bounds.isValid()) { map.fitBounds(bounds, { maxZoom: 15 }); } else { map.setView([42.9, -88.5], 9); }
    var legend = document.getElementById("legend");
    Object.keys(colours).forEach(function (k) {
      var s = document.createElement("span"), i = document.createElement("i");
      i.style.background = colours[k]; s.appendChild(i); s.appendChild(document.createTextNode(k.replace(/_/g, " ")));
      legend.appendChild(s);
    });
  });
})();
