"""The English shapes of generated text that the analysis writes into the record (render
stage, pure).

The day JSON stores some sentences the analysis wrote in English: the day's title, the
prediction verdict, the text of detected failures, the default health checks' reasons.
They are part of the sealed record and never change; a translated page shows them through
render/translate.py, which matches each against these msgids (a `{name}` is a value kept
as written, a `{date}` is re-written the language's way). Each shape here mirrors the
f-string that writes it; tests/test_i18n.py writes every one of them through the real
code and checks that each is translated, so the two cannot drift apart unseen.
"""

from __future__ import annotations

from chronicle.render.i18n import N_

SHAPES = (
    # analysis/days.py: the day's title
    N_("Day {day} · {date}"),
    # analysis/prediction.py `infer`: the verdict, its basis and what would falsify it
    N_("on track: the eval loss is inside the pre-registered band"),
    N_("ahead of prediction: eval loss below the band"),
    N_("behind prediction: eval loss above the band"),
    N_("one eval ({metric}) at step {step} against the prediction registered {date}"),
    N_("one eval ({metric}) at step {step} against the prediction registered None"),
    N_("a later eval outside the band at its own budget fraction"),
    N_("a later eval at or above the band's lower edge ({value} here)"),
    N_("a later eval at or below the band's upper edge ({value} here)"),
    # analysis/incidents.py: detected failures (chart event labels too)
    N_("no metrics for {duration} after step {step}"),
    N_("no metrics since step {step} ({duration} so far as of {time})"),
    N_("loss spike to {value} at step {step} over a trailing-hour baseline of {baseline} "
       "(sigma {sigma}); steps {steps}"),
    N_("loss was NaN or inf on {rows} logged row(s), steps {steps}"),
    N_("W&B run {run} forked from {parent} at step {step}; no metrics for {duration}"),
    N_("W&B run {run} forked from {parent} at step {step} (resumed from checkpoint; steps "
       "{steps} re-done); no metrics for {duration}"),
    # analysis/corrections.py: why a figure of a sealed day moved
    N_("{rows} metric row(s) of this day arrived after it was sealed"),
    # render/charts.py: the kinds of events drawn on charts (legend entries, data values)
    N_("restart"), N_("fork"), N_("failure"), N_("config"), N_("phase"), N_("gap"),
    N_("context"), N_("mixture"), N_("budget"),
    # render/charts.py: a chart's fixed words (tooltips, legends, an empty chart)
    N_("series"), N_("time (UTC)"), N_("threshold"), N_("events"), N_("event"), N_("what"),
    N_("no data"),
    # render/day_charts.py: the four charts of a day sealed before the chart redesign
    N_("Loss, run so far ({date} highlighted)"), N_("Throughput on {date}"),
    N_("MoE token drop fraction on {date}"), N_("Gradient norm, run so far ({date} highlighted)"),
    N_("train loss"), N_("eval loss"), N_("loss"), N_("compute-step tokens/s"), N_("tokens/s"),
    N_("alert 2.0M tok/s"), N_("drop fraction"), N_("fraction dropped"), N_("alert 7%"),
    N_("grad norm"), N_("alert 2.0"), N_("fork: {run} from step {step}"),
    # render/charts_page.py, render/run_pages.py: the run-wide charts
    N_("Loss"), N_("Tokens processed"), N_("Throughput"), N_("Model FLOPs utilisation"),
    N_("MoE token drop fraction"), N_("Gradient norm"), N_("Learning rate"),
    N_("tokens processed"), N_("tokens"), N_("token budget"), N_("sustained tokens/s (daily)"),
    N_("MFU (%)"), N_("MFU (percent)"), N_("fraction of tokens dropped"), N_("learning rate"),
    N_("predicted"), N_("eval loss (actual)"), N_("predicted band"),
    N_("Eval loss: actual vs pre-registered prediction"), N_("fraction of the token budget"),
    N_("MoE token drop fraction by sequence length"),
    N_("Compute-step vs sustained throughput per day"), N_("alert 2.0M"),
    N_("compute-step tokens/s (p50)"), N_("sustained tokens/s"), N_("MFU p10–p90"),
    N_("MFU p50"), N_("MFU per day (percent of peak FLOPs)"), N_("alert 15%"),
    N_("drop fraction p50"), N_("drop fraction max"), N_("MoE token drop fraction per day"),
    N_("alert 5.92"), N_("uniform bound ln {experts}"), N_("router entropy"),
    N_("Router entropy against the uniform bound"), N_("entropy (nats)"),
    # The charts since their redesign (render/day_charts.py, charts_page.py, run_pages.py,
    # panels.py, marks.py, vega.py, metrics.py): titles, subtitles, axes, legends, tooltips
    N_("Loss, run so far ({date} shaded)"), N_("Gradient norm, run so far ({date} shaded)"),
    N_("Loss against tokens processed"), N_("Gradient norm against tokens processed"),
    N_("Learning rate against tokens processed"), N_("Tokens processed against the budget"),
    N_("Compute-step and sustained throughput per day"), N_("MFU per day: median and p10–p90"),
    N_("Eval loss − prediction"), N_("Eval loss: actual and pre-registered prediction"),
    N_("Token dropping per {kind}"),
    N_("fitted after warm-up (first {tokens} tokens, peak {value})"),
    N_("log scale: the warm-up falls steeply"),
    N_("y axis fitted after the first 5% of the budget"),
    N_("MFU (% of peak FLOPs)"), N_("MFU (fraction of peak FLOPs)"), N_("alert"),
    N_("budget fraction"), N_("check"), N_("day (UTC)"), N_("day"), N_("eval − predicted"),
    N_("gradient norm"), N_("residual"), N_("risk"), N_("rule"), N_("span"), N_("status"),
    N_("tokens dropped (p50)"), N_("tokens dropped"), N_("value"), N_("watched"), N_("now"),
    N_("seconds per step"), N_("progress"), N_("router bias"), N_("Smoothed (EMA) "),
    N_("train cross-entropy"), N_("compute-step throughput"), N_("MFU"), N_("step time"),
    N_("token drop fraction"), N_("run progress"), N_("router bias max"),
    N_("router bias min"), N_("peak memory"), N_("{series} (smoothed)"),
    N_("this day"), N_("downtime"), N_("phase change"), N_("config change"),
    N_("context length change"), N_("data-mixture switch"), N_("budget change"),
    N_("several gaps in telemetry"), N_("restart as {run} from step {step}"),
    N_("phase: {name}"), N_("alert {value}"), N_("alert {value} ({stat}, {minutes} min)"),
    N_("budget {value}"), N_("{value} min"), N_("{value} nats"),
    N_("pass"), N_("warn"), N_("fail"), N_("no-data"),
    N_("upcoming"), N_("watching"), N_("triggered"), N_("passed"),
    # analysis/claims.py: how a claim was checked
    N_("claimed value equals {figure}"), N_("claimed value within {share} of {figure}"),
    N_("{figure} is at least the claimed value"), N_("{figure} is at most the claimed value"),
    # analysis/incidents.py: a fork's evidence
    N_("W&B run {run} last row kept: step {step} at {time}"),
    N_("W&B run {run} first row: step {step} at {time}"),
    N_("replaces {id}"),
    # config/default_checks.py: the reasons of the twelve default health checks
    N_("no metrics for over 10 minutes: the job stalled, crashed or lost its logger"),
    N_("a loss spike by upstream's rule (5-min minimum above the trailing hour's mean + 6σ)"),
    N_("gradient norm above 2.0 precedes loss spikes and divergence"),
    N_("NaN/inf loss: the trainer skips those updates and they may signal divergence"),
    N_("over 7% of tokens dropped by the MoE router for an hour: capacity is starved"),
    N_("router entropy far below the uniform bound: experts are collapsing"),
    N_("load-balancing bias beyond ±400: the balancer is fighting a skewed router"),
    N_("compute-step throughput under 2.0M tokens/s for an hour: a slow node or bad "
       "sharding"),
    N_("MFU under 15% (percent of peak) for an hour: the accelerators are idling"),
    N_("eval loss rose above its best so far: the model got worse on held-out data"),
    N_("eval loss outside the pre-registered prediction band"),
    N_("no heartbeat for over an hour: work since the last checkpoint is at risk"),
)
