"""The block-storage page, its refreshable part, "Sync now" and a run's progress."""
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from . import conf, rbd_sync
from .image_list import ListState, is_bigint, is_text
from .inventory import image_context, page_context
from .models import Run


def context_for(request):
    state = ListState.from_query(request.GET)
    context = page_context(state)
    context["chart_js"] = conf.get("CHART_JS")
    return context


# Every view needs a login and the permission to see the inventory: a login alone is any
# account of the console's site, whatever it is for.
VIEW = "rbdsync_console.view_inventory"


@require_GET
@login_required
@permission_required(VIEW, raise_exception=True)
@never_cache
def block_storage(request):
    return render(request, "rbdsync_console/block_storage.html", context_for(request))


@require_GET
@login_required
@permission_required(VIEW, raise_exception=True)
@never_cache
def inventory(request):
    """The part of the page a finished run changes, for the page to swap in."""
    return render(request, "rbdsync_console/_inventory.html", context_for(request))


@require_GET
@login_required
@permission_required(VIEW, raise_exception=True)
@never_cache
def image(request):
    """One image's page: ?cluster=FSID&pool=ID&namespace=NAME&id=IMAGE_ID (namespace empty
    or absent: the pool's default one)."""
    try:
        fsid = str(uuid.UUID(request.GET["cluster"]))
        pool_id = int(request.GET["pool"])
        image_id = request.GET["id"]
    except (KeyError, ValueError) as error:
        raise Http404("an image is named by cluster, pool, namespace and id") from error
    namespace = request.GET.get("namespace", "")
    # Values no stored row can hold (a NUL is stored escaped): not found, never a 500.
    if not (is_bigint(pool_id) and is_text(image_id) and is_text(namespace)):
        raise Http404("no such image in the inventory")
    context = image_context(fsid, pool_id, namespace, image_id)
    if context is None:
        raise Http404("no such image in the inventory (removed since, or never synced)")
    return render(request, "rbdsync_console/image.html", context)


@require_POST
@login_required
@permission_required("rbdsync_console.sync_now", raise_exception=True)
def sync_now(request):
    """Asks rbd-sync for a run (trigger web, requested by the signed-in user): through the
    trigger socket, or as a detached `rbd-sync run` in direct mode. Answers JSON to the
    page's script ({state, exit_code, message, hint, run_id, pid, holder}); a plain form
    post gets a message and the page again."""
    answer = rbd_sync.call("web", detach=True, timeout=conf.get("ANSWER_TIMEOUT"),
                           requested_by=rbd_sync.requester_name(request.user))
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse(answer.as_json())
    level = {"started": messages.INFO, "requested": messages.INFO,
             "already_running": messages.WARNING}.get(answer.state, messages.ERROR)
    text = answer.message + (f" (hint: {answer.hint})" if answer.state == "failed" else "")
    messages.add_message(request, level, text)
    return redirect("rbdsync_console:block_storage")


@require_GET
@login_required
@permission_required(VIEW, raise_exception=True)
@never_cache
def run_progress(request, run_id):
    """A run's row for the progress bar: status, phase, done, total, and once it ended,
    how (message). A row still `running` whose process is gone (Run.claim_is_free) is
    answered as abandoned, so that the page stops following it."""
    run = Run.objects.filter(run_id=run_id).first()
    if run is None:
        raise Http404("no such run")
    if run.abandoned():
        return JsonResponse({"run_id": str(run.run_id), "status": "abandoned",
                             "phase": run.phase, "done": run.done, "total": run.total,
                             "trigger": run.trigger, "requested_by": run.requested_by,
                             "error": None,
                             "message": f"sync abandoned: pid {run.pid} on {run.host} ended "
                                        "without recording how (killed?); the next sync "
                                        "records it"})
    answer = {"run_id": str(run.run_id), "status": run.status, "phase": run.phase,
              "done": run.done, "total": run.total, "trigger": run.trigger,
              "requested_by": run.requested_by, "error": run.error}
    if not run.running:
        answer["message"] = run.outcome
    return JsonResponse(answer)
