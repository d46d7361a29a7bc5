/* The register map: every case's site, coloured by status, from /register/sites.geojson. */
(function () {
  "use strict";
  var el = document.getElementById("register-map");
  if (!el || !window.L) { return; }
  var colours = { received: "#9a6700", under_review: "#9a6700", returned: "#d4a72c",
    approved: "#1a7f37", approved_with_conditions: "#2da44e", disapproved: "#b3261e",
    permit_issued: "#0969da", closed: "#6e7781", withdrawn: "#afb8c1" };
  var map = L.map(el, { preferCanvas: true });
  fetch(el.dataset.sites, { credentials: "same-origin" }).then(function (r) { return r.json(); })
    .then(function (fc) {
      var layer = L.geoJSON(fc, {
        pointToLayer: function (f, ll) {
          return L.circleMarker(ll, { radius: 8, weight: 1, color: "#1d2733", fillOpacity: 0.85,
            fillColor: colours[f.properties.status] || "#6e7781" });
        },
        onEachFeature: function (f, lyr) {
          var p = f.properties, div = document.createElement("div"), a = document.createElement("a");
          a.href = p.url; a.textContent = p.number; div.appendChild(a);
          div.appendChild(document.createTextNode(" " + p.status + ": " + p.title + " (" + p.applicant + ")"));
          lyr.bindPopup(div);
        }
      }).addTo(map);
      if (fc.features.length) { map.fitBounds(layer.getBounds().pad(0.3), { maxZoom: 15 }); }
      else { map.setView([42.9, -88.5], 9); }
      var legend = document.getElementById("legend");
      Object.keys(colours).forEach(function (k) {
        var s = document.createElement("span"), i = document.createElement("i");
        i.style.background = colours[k]; s.appendChild(i); s.appendChild(document.createTextNode(k.replace(/_/g, " ")));
        legend.appendChild(s);
      });
    });
})();
