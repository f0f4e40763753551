"""Runs a pod of a Kubernetes manifest in podman, as a kubelet would, for the container tests.

No Kubernetes runs on a CI machine. So that deploy/kubernetes/ and the image cannot drift
apart, the tests read the pod template of a CronJob or Job from the manifest and run
exactly its containers: image, command and args (with Kubernetes' $(VAR) expansion),
env (values, ConfigMap and Secret keys), volumes (Secret, ConfigMap, emptyDir: with
their modes and fsGroup's ownership) and security context (user, group, fsGroup,
capabilities, no new privileges, read-only root). The pod's network is the host's
(`podman run --network host`): the test cluster and database listen on 127.0.0.1.

A field of the pod spec this emulation does not know is an error, not ignored: a
manifest that grows one must grow the emulation too.
"""

import json
import os
import re
import subprocess
import tempfile

import yaml

# Pod and container fields that do not change what runs in a one-shot test pod.
_IGNORED_POD = {"restartPolicy", "terminationGracePeriodSeconds", "automountServiceAccountToken",
                "enableServiceLinks", "serviceAccountName"}
_KNOWN_POD = _IGNORED_POD | {"securityContext", "initContainers", "containers", "volumes"}
_IGNORED_CONTAINER = {"name", "resources", "imagePullPolicy"}
_KNOWN_CONTAINER = _IGNORED_CONTAINER | {"image", "command", "args", "env", "volumeMounts",
                                         "securityContext"}
_KNOWN_POD_SECURITY = {"runAsNonRoot", "runAsUser", "runAsGroup", "fsGroup", "seccompProfile"}
_KNOWN_CONTAINER_SECURITY = {"allowPrivilegeEscalation", "readOnlyRootFilesystem",
                             "capabilities", "runAsNonRoot"}


class PodError(Exception):
    """The manifest asks for something this emulation cannot do, or names a missing object."""


def load(path):
    """Every object of the YAML file at `path`, as dicts."""
    with open(path, encoding="utf-8") as stream:
        return [document for document in yaml.safe_load_all(stream) if document]


def find(objects, kind, name):
    """The object of `kind` named `name` among `objects`."""
    for candidate in objects:
        if candidate.get("kind") == kind and candidate["metadata"]["name"] == name:
            return candidate
    raise PodError(f"no {kind} named {name} in the manifest")


def pod_spec(workload):
    """The pod template's spec of a CronJob or a Job."""
    if workload["kind"] == "CronJob":
        return workload["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    if workload["kind"] == "Job":
        return workload["spec"]["template"]["spec"]
    raise PodError(f"a {workload['kind']} has no pod template this emulation knows")


def _unknown(fields, known, where):
    extra = set(fields) - known
    if extra:
        raise PodError(f"{where}: the kubelet emulation does not know {sorted(extra)}")


_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text, env):
    """Kubernetes' expansion of command and args: $(NAME) from env, $$ for $, else kept."""

    def replace(match):
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return _REFERENCE.sub(replace, text)


class Pod:
    """One run of a pod spec in podman. `objects` holds the namespace's ConfigMaps and
    Secrets by (kind, name), each as its `data` dict of text (not base64)."""

    def __init__(self, spec, objects, work_dir):
        _unknown(spec, _KNOWN_POD, "pod spec")
        self.spec = spec
        self.objects = objects
        self.work = tempfile.mkdtemp(prefix="pod.", dir=work_dir)
        self.security = spec.get("securityContext", {})
        _unknown(self.security, _KNOWN_POD_SECURITY, "pod securityContext")
        self.volume_dirs = {}
        for volume in spec.get("volumes", []):
            self.volume_dirs[volume["name"]] = self._make_volume(volume)

    def _data(self, kind, name, key=None):
        data = self.objects.get((kind, name))
        if data is None:
            raise PodError(f"the pod needs {kind} {name}, which the test did not provide")
        if key is None:
            return data
        if key not in data:
            raise PodError(f"{kind} {name} has no key {key}")
        return data[key]

    def _make_volume(self, volume):
        path = os.path.join(self.work, "volumes", volume["name"])
        os.makedirs(path)
        fs_group = self.security.get("fsGroup")
        if "emptyDir" in volume:
            # kubelet makes an emptyDir 0777; fsGroup makes it setgid and the group's.
            os.chmod(path, 0o777)
            if fs_group is not None:
                os.chown(path, -1, fs_group)
                os.chmod(path, 0o2777)
            return path
        for kind, source in (("Secret", volume.get("secret")), ("ConfigMap", volume.get("configMap"))):
            if source is None:
                continue
            name = source["secretName"] if kind == "Secret" else source["name"]
            data = self._data(kind, name)
            items = source.get("items") or [{"key": key, "path": key} for key in data]
            # kubelet's layout (its atomic writer): the files in a timestamped directory,
            # `..data` a symlink to it, and each name a symlink into `..data`.
            payload = os.path.join(path, "..2026_12_06_00_00_00.000000000")
            os.makedirs(payload)
            for item in items:
                file_path = os.path.join(payload, item["path"])
                with open(file_path, "w", encoding="utf-8") as stream:
                    stream.write(self._data(kind, name, item["key"]))
                mode = item.get("mode", source.get("defaultMode", 0o644))
                if fs_group is not None:
                    # kubelet's SetVolumeOwnership: the fsGroup's, and group-readable.
                    os.chown(file_path, -1, fs_group)
                    mode |= 0o440
                os.chmod(file_path, mode)
                os.symlink(os.path.join("..data", item["path"]), os.path.join(path, item["path"]))
            os.symlink(os.path.basename(payload), os.path.join(path, "..data"))
            os.chmod(payload, 0o755 if fs_group is None else 0o2755)
            if fs_group is not None:
                os.chown(payload, -1, fs_group)
            os.chmod(path, 0o755 if fs_group is None else 0o2755)
            if fs_group is not None:
                os.chown(path, -1, fs_group)
            return path
        raise PodError(f"volume {volume['name']}: only secret, configMap and emptyDir are emulated")

    def _env(self, container):
        env = {}
        for variable in container.get("env", []):
            if "value" in variable:
                env[variable["name"]] = expand(variable["value"], env)
                continue
            source = variable["valueFrom"]
            if "configMapKeyRef" in source:
                ref = source["configMapKeyRef"]
                env[variable["name"]] = self._data("ConfigMap", ref["name"], ref["key"])
            elif "secretKeyRef" in source:
                ref = source["secretKeyRef"]
                env[variable["name"]] = self._data("Secret", ref["name"], ref["key"])
            else:
                raise PodError(f"env {variable['name']}: only value, configMapKeyRef and "
                               "secretKeyRef are emulated")
        return env

    def podman_argv(self, container, images):
        """The `podman run` of one container. `images` maps the manifest's image names to
        local ones (the test's freshly built image)."""
        _unknown(container, _KNOWN_CONTAINER, f"container {container.get('name')}")
        security = container.get("securityContext", {})
        _unknown(security, _KNOWN_CONTAINER_SECURITY, f"container {container['name']} securityContext")
        image = container["image"]
        if image not in images:
            raise PodError(f"container {container['name']} runs image {image}, which the test "
                           f"did not build (it built {sorted(images)}): is the manifest's tag "
                           "the package's version?")
        env = self._env(container)
        env_file = os.path.join(self.work, f"{container['name']}.env")
        with open(os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w",
                  encoding="utf-8") as stream:
            for name, value in env.items():
                if "\n" in value:
                    raise PodError(f"env {name}: a value with a newline cannot go through --env-file")
                stream.write(f"{name}={value}\n")
        argv = ["podman", "run", "--rm", "--network", "host", "--env-file", env_file]
        user = self.security.get("runAsUser")
        if (self.security.get("runAsNonRoot") or security.get("runAsNonRoot")) and not user:
            # The kubelet refuses a root user, and one it cannot check: the image's USER
            # by name. The manifests give the number.
            raise PodError(f"container {container['name']}: runAsNonRoot without a non-zero "
                           "runAsUser")
        if user is not None:
            # Without runAsGroup the runtime takes the image's group for the user.
            group = self.security.get("runAsGroup")
            argv += ["--user", f"{user}" if group is None else f"{user}:{group}"]
        if self.security.get("fsGroup") is not None:
            argv += ["--group-add", str(self.security["fsGroup"])]
        if security.get("allowPrivilegeEscalation") is False:
            argv += ["--security-opt", "no-new-privileges"]
        for capability in security.get("capabilities", {}).get("drop", []):
            argv += ["--cap-drop", capability.lower()]
        if security.get("readOnlyRootFilesystem"):
            # Kubernetes mounts no tmpfs of its own on a read-only root; podman would.
            argv += ["--read-only", "--read-only-tmpfs=false"]
        for mount in container.get("volumeMounts", []):
            if "subPath" in mount:
                raise PodError(f"volumeMount {mount['name']}: subPath is not emulated")
            source = self.volume_dirs[mount["name"]]
            argv += ["-v", f"{source}:{mount['mountPath']}" + (":ro" if mount.get("readOnly") else "")]
        if "command" in container:
            argv += ["--entrypoint", json.dumps([expand(part, env) for part in container["command"]])]
        argv.append(images[image])
        argv += [expand(arg, env) for arg in container.get("args", [])]
        return argv

    def run(self, images, timeout=300):
        """Runs the init containers in order, each to exit 0, then the (one) container.
        Returns the CompletedProcess of that container (stdout and stderr as text)."""
        containers = self.spec["containers"]
        if len(containers) != 1:
            raise PodError("only pods of one container are emulated")
        for init in self.spec.get("initContainers", []):
            done = subprocess.run(self.podman_argv(init, images), capture_output=True, text=True,
                                  timeout=timeout, check=False)
            if done.returncode != 0:
                raise PodError(f"init container {init['name']} exited {done.returncode}: "
                               f"{done.stderr.strip()}")
        return subprocess.run(self.podman_argv(containers[0], images), capture_output=True,
                              text=True, timeout=timeout, check=False)
