// Step through a replay one move at a time. Without this script the page lists every step.
(function () {
  "use strict";
  var box = document.getElementById("stepper");
  if (!box) { return; }
  var last = parseInt(box.getAttribute("data-last"), 10) || 0;
  var now = 0;
  var controls = box.querySelector(".controls");
  controls.hidden = false;
  box.classList.add("stepping");
  function show(n) {
    now = Math.max(0, Math.min(last, n));
    document.getElementById("now").textContent = String(now);
    var steps = box.querySelectorAll(".step");
    for (var i = 0; i < steps.length; i++) {
      steps[i].classList.toggle("current", parseInt(steps[i].getAttribute("data-step"), 10) === now);
    }
    var lines = document.querySelectorAll(".log li[data-step]");
    for (var j = 0; j < lines.length; j++) {
      var at = parseInt(lines[j].getAttribute("data-step"), 10);
      lines[j].classList.toggle("later", at > now);
      lines[j].classList.toggle("now", at === now);
    }
    document.getElementById("outcome").hidden = now !== last;
  }
  document.getElementById("first").addEventListener("click", function () { show(0); });
  document.getElementById("prev").addEventListener("click", function () { show(now - 1); });
  document.getElementById("next").addEventListener("click", function () { show(now + 1); });
  document.getElementById("last").addEventListener("click", function () { show(last); });
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight") { show(now + 1); }
    if (e.key === "ArrowLeft") { show(now - 1); }
  });
  var hash = /^#step-(\d+)$/.exec(window.location.hash);
  show(hash ? parseInt(hash[1], 10) : 0);
})();
