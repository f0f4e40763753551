// The block-storage page: "Sync now", the progress of a run, and the usage charts.
// The server answers "Sync now" from rbd-sync's guard (started / already running /
// failed); this script only shows the answer and follows the run's row until it ends.
"use strict";

(function () {
  const sync = document.getElementById("sync");
  const form = document.getElementById("sync-form");
  const notice = document.getElementById("notice");
  const progress = document.getElementById("progress");
  let following = null;  // the run id whose row feeds the progress bar

  function say(text, state) {
    notice.textContent = text;
    notice.className = state;
    notice.dataset.state = state;
  }

  // ---------------------------------------------------------------- charts

  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

  function bytes(value) {
    let unit = 0;
    while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) { value /= 1024; unit++; }
    return `${unit ? value.toPrecision(3) : value} ${UNITS[unit]}`;
  }

  function when(milliseconds) {
    const date = new Date(milliseconds);
    return date.toLocaleDateString() + " " + date.toLocaleTimeString();
  }

  // Axis labels as fine as the chart's span needs: seconds within an hour, the time of
  // day within a day, the date beyond.
  function tick(milliseconds, span) {
    const date = new Date(milliseconds);
    if (span <= 3600000) { return date.toLocaleTimeString(); }
    if (span <= 86400000) {
      return date.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"});
    }
    return date.toLocaleDateString([], {month: "short", day: "numeric"});
  }

  // One line chart per pool: stored, raw used, available and provisioned bytes over
  // time. A figure holds until the pool's next history row, hence stepped lines.
  function drawCharts() {
    if (typeof Chart === "undefined") { return; }  // no chart library: figures only
    for (const canvas of document.querySelectorAll("canvas.usage-chart")) {
      const old = Chart.getChart(canvas);
      if (old) { old.destroy(); }
      const source = document.getElementById(canvas.dataset.chart);
      const data = JSON.parse(source.textContent);
      const times = data.points.map(point => point.t);
      const span = times.length ? Math.max(...times) - Math.min(...times) : 0;
      const series = (field, label, color) => ({
        label, borderColor: color, backgroundColor: color, stepped: "before", pointRadius: 2,
        borderWidth: 2, data: data.points.map(point => ({x: point.t, y: point[field]})),
      });
      new Chart(canvas, {
        type: "line",
        data: {datasets: [
          series("stored", "stored", "#2f6fb3"),
          series("used", "raw used", "#b35a2f"),
          series("max_avail", "available", "#4a9a4a"),
          series("provisioned", "provisioned", "#888888"),
        ]},
        options: {
          animation: false, responsive: false, parsing: true,
          scales: {
            x: {type: "linear", ticks: {maxTicksLimit: 5, callback: value => tick(value, span)}},
            y: {beginAtZero: true, ticks: {callback: value => bytes(value)}},
          },
          plugins: {
            legend: {labels: {boxWidth: 10}},
            tooltip: {callbacks: {
              title: items => items.length ? when(items[0].parsed.x) : "",
              label: item => `${item.dataset.label}: ${bytes(item.parsed.y)}`,
            }},
          },
        },
      });
    }
  }

  // ---------------------------------------------------------------- the inventory

  async function refreshInventory() {
    const response = await fetch(sync.dataset.inventoryUrl, {credentials: "same-origin"});
    if (!response.ok) { return; }
    const view = document.getElementById("inventory-view");
    view.innerHTML = await response.text();
    localTimes(view);
    drawCharts();
  }

  // ---------------------------------------------------------------- a run's progress

  function showProgress(row) {
    const bar = document.getElementById("progress-bar");
    progress.hidden = false;
    if (row.total) { bar.max = row.total; bar.value = row.done || 0; }
    else { bar.removeAttribute("value"); }  // indeterminate until the total is known
    const counts = row.total ? ` ${row.done || 0}/${row.total}` : "";
    document.getElementById("progress-text").textContent = `${row.phase || "starting"}${counts}`;
  }

  // What follow() accepts as a run id: the id goes into the progress URL, and the holder's
  // comes from a lock file other local users can write.
  const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  // Failed polls in a row (HTTP errors, the console unreachable) before the page gives up.
  const MOST_FAILURES = 20;

  // Polls the run's row until it ends, is abandoned (its process died), is gone after
  // it was seen, or the console fails to answer MOST_FAILURES times in a row (a row not
  // there yet counts as one: a run that holds the guard records itself once it has
  // connected); then says which and refreshes the inventory.
  async function follow(runId) {
    if (!RUN_ID.test(String(runId))) { return; }
    following = runId;
    const url = sync.dataset.progressUrl.replace("00000000-0000-0000-0000-000000000000",
                                                 encodeURIComponent(runId));
    let failures = 0;
    let seen = false;
    while (following === runId) {
      let row;
      try {
        const response = await fetch(url, {credentials: "same-origin"});
        if (response.ok) {
          row = await response.json();
          failures = 0;
          seen = true;
        } else if (response.status === 404 && seen) {
          row = {status: "unknown", message: `run ${runId} is no longer in the run history`};
        } else if (response.status === 404) {
          failures += 1;
          row = {status: "running", phase: "starting", missing: true};
        } else {
          failures += 1;
          row = {status: "running", phase: `(progress: HTTP ${response.status})`};
        }
      } catch (error) {
        failures += 1;
        row = {status: "running", phase: "(console unreachable)"};
      }
      if (row.status === "running" && failures < MOST_FAILURES) {
        showProgress(row);
        await new Promise(resolve => setTimeout(resolve, 300));
        continue;
      }
      following = null;
      if (row.status === "running") {
        progress.hidden = true;
        say(row.missing ? `run ${runId} is not in the run history`
                        : `stopped following run ${runId}: the console did not answer ` +
                          `${failures} times in a row; reload the page to see how it ended`,
            "failed");
        return;
      }
      // The inventory first, so that the outcome and the tables agree when it shows.
      try { await refreshInventory(); } catch (error) { /* the next load shows it */ }
      progress.hidden = true;
      say(row.message || `sync ${row.status}`,
          row.status === "succeeded" ? "succeeded" : row.status === "partial" ? "partial" : "failed");
    }
  }

  // ---------------------------------------------------------------- Sync now

  if (form) {
    form.addEventListener("submit", async event => {
      event.preventDefault();
      const button = document.getElementById("sync-now");
      button.disabled = true;  // one request at a time from this page; the guard does the rest
      say("asking rbd-sync…", "asking");
      try {
        const response = await fetch(form.action, {
          method: "POST", body: new FormData(form), credentials: "same-origin",
          headers: {"Accept": "application/json"},
        });
        if (!response.ok) { throw new Error(`HTTP ${response.status}`); }
        const answer = await response.json();
        // The last answer and how many there were, for scripts and tests: the notice
        // moves on once a run ends.
        sync.dataset.answer = JSON.stringify(answer);
        sync.dataset.answers = String(Number(sync.dataset.answers || 0) + 1);
        if (answer.state === "started") {
          say(`${answer.message}, run ${answer.run_id}`, "started");
          follow(answer.run_id);
        } else if (answer.state === "requested") {
          // A Kubernetes Job: its run has no id until its pod starts; the history shows it.
          say(`${answer.message}; ${answer.hint}`, "started");
        } else if (answer.state === "already_running") {
          say(answer.message, "already_running");
          // Somebody else's run (cron's, another user's): follow its row too.
          if (answer.run_id && following === null) { follow(answer.run_id); }
        } else {
          say(answer.hint ? `${answer.message} (hint: ${answer.hint})` : answer.message, "failed");
        }
      } catch (error) {
        say(`the console did not answer: ${error.message}`, "failed");
      } finally {
        button.disabled = false;
      }
    });
  }

  // ---------------------------------------------------------------- times

  // Times come in UTC (what a page without this script shows, and the hover text);
  // here they are written in the viewer's own zone.
  function localTimes(root) {
    for (const element of root.querySelectorAll("time[data-local]")) {
      const date = new Date(element.getAttribute("datetime"));
      if (isNaN(date)) { continue; }
      const options = {year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit",
                       minute: "2-digit", timeZoneName: "short"};
      if (element.dataset.local === "seconds") { options.second = "2-digit"; }
      element.textContent = date.toLocaleString([], options);
    }
  }

  localTimes(document);
  drawCharts();
  // A run already going when the page loads (cron's, say) gets its bar too.
  const lastRun = document.getElementById("last-run");
  if (lastRun && lastRun.dataset.status === "running") { follow(lastRun.dataset.runId); }
})();
