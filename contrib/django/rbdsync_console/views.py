"""The block-storage page, its refreshable part, "Sync now" and a run's progress."""
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from . import conf, rbd_sync
from .inventory import page_context
from .models import Run


def pool_filter_of(request):
    """?pool=ID[&cluster=FSID] as (fsid or None, pool id); None when absent or invalid."""
    try:
        pool_id = int(request.GET["pool"])
        fsid = str(uuid.UUID(request.GET["cluster"])) if request.GET.get("cluster") else None
    except (KeyError, ValueError):
        return None
    return (fsid, pool_id)


def context_for(request):
    context = page_context(pool_filter_of(request), request.GET.get("page", 1))
    context["chart_js"] = conf.get("CHART_JS")
    return context


@require_GET
@login_required
@never_cache
def block_storage(request):
    return render(request, "rbdsync_console/block_storage.html", context_for(request))


@require_GET
@login_required
@never_cache
def inventory(request):
    """The part of the page a finished run changes, for the page to swap in."""
    return render(request, "rbdsync_console/_inventory.html", context_for(request))


@require_POST
@login_required
@permission_required("rbdsync_console.sync_now", raise_exception=True)
def sync_now(request):
    """Starts a detached `rbd-sync run --trigger web`. Answers JSON to the page's script
    ({state, exit_code, message, hint, run_id, pid, holder}); a plain form post gets a
    message and the page again."""
    answer = rbd_sync.call("web", detach=True, timeout=conf.get("ANSWER_TIMEOUT"))
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse(answer.as_json())
    level = {"started": messages.INFO, "already_running": messages.WARNING}.get(answer.state,
                                                                               messages.ERROR)
    text = answer.message + (f" (hint: {answer.hint})" if answer.state == "failed" else "")
    messages.add_message(request, level, text)
    return redirect("rbdsync_console:block_storage")


@require_GET
@login_required
@never_cache
def run_progress(request, run_id):
    """A run's row for the progress bar: status, phase, done, total, and once it ended,
    how (message)."""
    run = Run.objects.filter(run_id=run_id).first()
    if run is None:
        raise Http404("no such run")
    answer = {"run_id": str(run.run_id), "status": run.status, "phase": run.phase,
              "done": run.done, "total": run.total, "trigger": run.trigger, "error": run.error}
    if not run.running:
        answer["message"] = run.outcome
    return JsonResponse(answer)
