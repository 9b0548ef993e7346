// The report's only script: it reads the embedded document, builds the table of contents,
// and fills a pending pod's node verdicts when it is opened. Text goes in with
// textContent only, so that names from users' files are never parsed as markup.
(function () {
  "use strict";
  var doc = JSON.parse(document.getElementById("kubesched-report-data").textContent);
  var runs = { "": doc };
  (doc.runs || []).forEach(function (run) { runs[run.label] = run; });

  var nav = document.getElementById("views");
  document.querySelectorAll("section[data-view]").forEach(function (section, i) {
    if (!section.id) { section.id = "view-" + i; }
    var link = document.createElement("a");
    link.href = "#" + section.id;
    link.textContent = section.getAttribute("data-view");
    nav.appendChild(link);
  });

  function fill(details) {
    var body = details.querySelector("table.verdicts tbody");
    if (body.childElementCount) { return; }
    var ref = details.getAttribute("data-verdicts");
    var run = runs[details.getAttribute("data-run")] || doc;
    if (ref === "") {
      var row = body.insertRow();
      row.insertCell().textContent = "—";
      row.insertCell().textContent = "no per-node verdicts were kept for this pod";
      return;
    }
    var verdicts = run.pending.verdictSets[Number(ref)];
    Object.keys(verdicts).forEach(function (verdict) {
      verdicts[verdict].forEach(function (node) {
        var tr = body.insertRow();
        tr.setAttribute("data-testid", "node-verdict");
        tr.setAttribute("data-node", node);
        tr.setAttribute("data-verdict", verdict);
        tr.insertCell().textContent = node;
        tr.insertCell().textContent = verdict;
      });
    });
  }

  document.querySelectorAll("details[data-testid=pending-pod]").forEach(function (details) {
    details.addEventListener("toggle", function () { if (details.open) { fill(details); } });
  });
})();
