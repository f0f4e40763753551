""""Sync now" for a console that runs on Kubernetes beside Rook: a Job made from the
rbd-sync CronJob (deploy/kubernetes/cronjob.yaml), as `kubectl create job --from=cronjob/`
makes one, with the run's trigger set to web and the signed-in user as --requested-by.

The console then holds no Ceph key and no writer password: the Job's pod gets them from
Rook's Secret and the pgpass Secret, as the nightly runs do. What the console's
ServiceAccount may do is deploy/kubernetes/sync-now-rbac.yaml: read that CronJob and
create Jobs in its namespace.

job_from_cronjob() is plain data in, data out (tests/container/ runs what it makes in
podman); create_job() talks to the API server with the pod's ServiceAccount token.
"""
import copy
import json
import os
import ssl
import urllib.error
import urllib.request

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
# What `kubectl create job --from=cronjob/NAME` marks a manual Job with.
INSTANTIATE_ANNOTATION = "cronjob.kubernetes.io/instantiate"


class KubernetesError(Exception):
    """The API server refused or could not be reached; `hint` says what to check."""

    def __init__(self, message, hint, exit_code):
        super().__init__(message)
        self.hint = hint
        self.exit_code = exit_code


def with_trigger(args, trigger, requested_by):
    """The container's args with `--trigger TRIGGER` and `--requested-by USER` (none when
    None) in place of any the CronJob gives: the same sync as the nightly one, recorded as
    asked. Kubernetes expands $(NAME) in args: a `$` of the user's name is doubled."""
    replaced = ("--trigger", "--requested-by")
    joined = tuple(f"{option}=" for option in replaced)
    result, skip = [], False
    for position, arg in enumerate(args):
        if skip:
            skip = False
        elif arg in replaced and position + 1 < len(args):
            skip = True
        elif not arg.startswith(joined):
            result.append(arg)
    if not result or result[0] != "run":
        raise ValueError(f"the CronJob's container does not run 'rbd-sync run' (args {args})")
    asked = ["--trigger", trigger]
    if requested_by is not None:
        asked += ["--requested-by", requested_by.replace("$", "$$")]
    return [result[0], *asked, *result[1:]]


def job_from_cronjob(cronjob, trigger, requested_by):
    """The Job that "Sync now" creates: the CronJob's jobTemplate, owned by the CronJob
    (so that deleting the CronJob deletes it, as for its scheduled Jobs), named after it,
    its one container asked for a run with `trigger` by `requested_by`."""
    template = copy.deepcopy(cronjob["spec"]["jobTemplate"])
    metadata = template.get("metadata", {})
    name = cronjob["metadata"]["name"]
    metadata.update({
        "generateName": f"{name}-now-",
        "namespace": cronjob["metadata"]["namespace"],
        "annotations": {**metadata.get("annotations", {}), INSTANTIATE_ANNOTATION: "manual"},
    })
    if "uid" in cronjob["metadata"]:
        metadata["ownerReferences"] = [{
            "apiVersion": "batch/v1", "kind": "CronJob", "name": name,
            "uid": cronjob["metadata"]["uid"], "controller": True}]
    containers = template["spec"]["template"]["spec"]["containers"]
    if len(containers) != 1:
        raise ValueError(f"CronJob {name} has {len(containers)} containers, not one")
    containers[0]["args"] = with_trigger(containers[0].get("args", []), trigger, requested_by)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
            "spec": template["spec"]}


class ApiServer:
    """The cluster's API server as the pod's ServiceAccount, from inside a pod."""

    def __init__(self, service_account=SERVICE_ACCOUNT, environ=None):
        environ = os.environ if environ is None else environ
        host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT")
        if not host or not port:
            raise KubernetesError(
                "KUBERNETES_SERVICE_HOST is not set: the console does not run in a pod",
                'run the console in the cluster, or set RBDSYNC_CONSOLE["KUBERNETES_CRONJOB"] '
                "to None and use the trigger socket", 78)
        self.base = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"
        try:
            with open(os.path.join(service_account, "token"), encoding="utf-8") as stream:
                self.token = stream.read().strip()
            self.context = ssl.create_default_context(
                cafile=os.path.join(service_account, "ca.crt"))
        except (OSError, ssl.SSLError) as error:
            raise KubernetesError(
                f"cannot read the ServiceAccount's token or CA: {error}",
                "give the console's pod a ServiceAccount with automountServiceAccountToken "
                "(deploy/kubernetes/sync-now-rbac.yaml)", 77) from error

    def request(self, method, path, body=None, timeout=30):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Accept": "application/json",
            "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.context) as reply:
                return json.load(reply)
        except urllib.error.HTTPError as error:
            if error.code in (401, 403):
                raise KubernetesError(
                    f"the API server refused {method} {path} (HTTP {error.code})",
                    "bind the console's ServiceAccount to the Role of "
                    "deploy/kubernetes/sync-now-rbac.yaml", 77) from error
            raise KubernetesError(f"the API server answered {method} {path} with HTTP "
                                  f"{error.code}", "check the CronJob's namespace and name in "
                                  'RBDSYNC_CONSOLE["KUBERNETES_CRONJOB"]', 69) from error
        except (urllib.error.URLError, OSError) as error:
            raise KubernetesError(f"cannot reach the API server at {self.base}: {error}",
                                  "check the pod's network policy towards the API server",
                                  69) from error


def create_job(namespace_and_name, trigger, requested_by, api=None):
    """Creates the Job of "Sync now" from the CronJob `namespace/name`; returns its name."""
    namespace, _, name = namespace_and_name.partition("/")
    if not namespace or not name:
        raise KubernetesError(
            f'RBDSYNC_CONSOLE["KUBERNETES_CRONJOB"] is {namespace_and_name!r}, not NAMESPACE/NAME',
            'set it to the CronJob of deploy/kubernetes, e.g. "rook-ceph/rbd-sync"', 78)
    api = api or ApiServer()
    cronjob = api.request("GET", f"/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}")
    try:
        job = job_from_cronjob(cronjob, trigger, requested_by)
    except (KeyError, ValueError) as error:
        raise KubernetesError(f"CronJob {namespace}/{name} is not rbd-sync's: {error}",
                              "point KUBERNETES_CRONJOB at deploy/kubernetes/cronjob.yaml's "
                              "CronJob", 78) from error
    created = api.request("POST", f"/apis/batch/v1/namespaces/{namespace}/jobs", job)
    return created["metadata"]["name"]
