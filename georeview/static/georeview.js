/* georeview: popups and tooltips built with DOM text nodes (never innerHTML), so text that
 * comes from a submission or a reference layer is shown as text and never parsed as HTML.
 * georeview.info[key] = {label, lines: [str], fields: [[column, label]], findings: [...],
 * no_findings: str} is written by georeview/webmap.py for each map layer. MIT licence (georeview). */
(function (root) {
  "use strict";
  var STATUS = {
    fail: "fails",
    needs_info: "needs information",
    pass: "passes",
    not_applicable: "not applicable"
  };

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }

  function popup(info, props) {
    var box = el("div", null, "gr-popup");
    box.appendChild(el("div", info.label, "gr-title"));
    (info.lines || []).forEach(function (t) { box.appendChild(el("div", t, "gr-line")); });
    var fields = info.fields || [];
    if (fields.length && props) {
      var table = el("table", null, "gr-attrs");
      fields.forEach(function (f) {
        var v = props[f[0]];
        if (v === undefined || v === null || v === "") { return; }
        var tr = el("tr");
        tr.appendChild(el("th", f[1]));
        tr.appendChild(el("td", v));
        table.appendChild(tr);
      });
      if (table.childNodes.length) { box.appendChild(table); }
    }
    var findings = info.findings || [];
    if (findings.length) {
      var ul = el("ul", null, "gr-findings");
      findings.forEach(function (f) {
        var li = el("li", null, "gr-finding gr-" + f.status);
        li.appendChild(el("span", f.citation, "gr-cite"));
        li.appendChild(el("span", STATUS[f.status] || f.status, "gr-status gr-s-" + f.status));
        li.appendChild(document.createTextNode(f.message));
        ul.appendChild(li);
      });
      box.appendChild(ul);
    } else if (info.no_findings) {
      box.appendChild(el("div", info.no_findings, "gr-note"));
    }
    return box;
  }

  /* Bind the popup and tooltip of one feature layer (called from folium's onEachFeature). */
  function bind(layer, feature, key) {
    var info = root.georeview.info[key] || { label: key };
    var props = (feature && feature.properties) || {};
    layer.bindPopup(function () { return popup(info, props); }, { maxWidth: 460 });
    layer.bindTooltip(function () { return document.createTextNode(info.label); }, { sticky: true });
  }

  /* A legend control: items = [{label, stroke, fill, line, dash}]. */
  function legend(map, items) {
    var control = L.control({ position: "bottomleft" });
    control.onAdd = function () {
      var box = el("div", null, "gr-legend leaflet-control");
      box.id = "georeview-legend";
      box.appendChild(el("b", "Legend"));
      items.forEach(function (it) {
        var row = el("div", null, "gr-legend-item");
        var sw = el("span", null, it.line ? "gr-line-swatch" : "gr-swatch");
        sw.style.borderColor = it.stroke;
        if (!it.line) { sw.style.background = it.fill; }
        if (it.dash) { sw.style.borderStyle = "dashed"; }
        row.appendChild(sw);
        row.appendChild(document.createTextNode(it.label));
        box.appendChild(row);
      });
      L.DomEvent.disableClickPropagation(box);
      L.DomEvent.disableScrollPropagation(box);
      return box;
    };
    control.addTo(map);
    return control;
  }

  // Fit the map to the site once its container has a size. A map in an iframe (the
  // report embeds one) or in a hidden tab may be laid out after its script runs, and
  // fitting a 0x0 map gives NaN coordinates; wait for the first real size instead.
  function fit(map, bounds, padding) {
    var b = L.latLngBounds(bounds);
    var opts = { padding: L.point(padding[0], padding[1]) };
    function sized() {
      var s = map.getSize();
      return s.x > 0 && s.y > 0;
    }
    function go() {
      map.invalidateSize(false);
      map.fitBounds(b, opts);
    }
    if (sized()) { go(); return; }
    map.setView(b.getCenter(), 15);
    var box = map.getContainer();
    if (typeof ResizeObserver !== "undefined") {
      var ro = new ResizeObserver(function () {
        if (box.clientWidth > 0 && box.clientHeight > 0) { ro.disconnect(); go(); }
      });
      ro.observe(box);
    } else {
      root.addEventListener("load", go);
    }
  }

  root.georeview = {
    info: {}, el: el, popup: popup, bind: bind, legend: legend, fit: fit, STATUS: STATUS
  };
})(window);
