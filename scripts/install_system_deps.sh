#!/usr/bin/env bash
# Install what the platform needs from the system, Debian/Ubuntu packages, as root:
# - the libraries MuJoCo needs to render headless (no display, no GPU needed): Mesa's EGL (the
#   default back-end, software llvmpipe on a CPU, the GPU's EGL where one exists) and OSMesa
#   (the fallback);
# - Chromium and a font for the web app's browser tests (tests/web drive /usr/bin/chromium
#   headless through Playwright; Playwright's own browser download is not used);
# - OpenSSH's client and server: the machines service's tests run a real sshd on a free loopback
#   port (platform_testing.sshd) and check the SSH command parser against `ssh -G`;
# - Debian's docker-compose: tests/deploy/test_compose.py has it parse and validate compose.yaml
#   (`docker-compose config` needs no container engine);
# - Debian's prometheus (prometheus and promtool): tests/test_e2e_metrics.py checks /metrics with
#   `promtool check metrics` and has a real Prometheus scrape a running platform.
# It installs only what is missing and does nothing when everything is there. Without root or
# apt-get it prints a hint and exits 0.
set -euo pipefail

# library (as `ldconfig -p` lists it) -> the Debian/Ubuntu package that ships it
LIBRARIES=(
    "libEGL.so.1 libegl1"
    "libEGL_mesa.so.0 libegl-mesa0"
    "libGL.so.1 libgl1"
    "libOSMesa.so libosmesa6"
)
DRI_PACKAGE="libgl1-mesa-dri" # Mesa's drivers, llvmpipe (swrast_dri.so) included

ldconfig_cmd="$(command -v ldconfig || true)"
for candidate in /sbin/ldconfig /usr/sbin/ldconfig; do
    [[ -n "$ldconfig_cmd" ]] && break
    [[ -x "$candidate" ]] && ldconfig_cmd="$candidate"
done
if [[ -z "$ldconfig_cmd" ]]; then
    echo "install_system_deps: no ldconfig here (not a glibc Linux?); install Mesa's EGL and OSMesa libraries (headless MuJoCo rendering) and Chromium (the web tests) yourself"
    exit 0
fi
known_libraries="$("$ldconfig_cmd" -p)"

missing=()
for entry in "${LIBRARIES[@]}"; do
    read -r library package <<<"$entry"
    if ! grep -qF "$library" <<<"$known_libraries"; then
        missing+=("$package")
    fi
done
if ! compgen -G "/usr/lib/*/dri/swrast_dri.so" >/dev/null && ! compgen -G "/usr/lib*/dri/swrast_dri.so" >/dev/null; then
    missing+=("$DRI_PACKAGE")
fi

# The browser tests' Chromium (Debian's package installs /usr/bin/chromium) and a font for its pages.
if [[ ! -x /usr/bin/chromium ]]; then
    missing+=("chromium")
fi
if ! compgen -G "/usr/share/fonts/truetype/liberation*/LiberationSans-Regular.ttf" >/dev/null; then
    missing+=("fonts-liberation")
fi

# The GPU machines' tests: a real OpenSSH server (/usr/sbin/sshd) and client (ssh -G, ssh-keygen).
if [[ ! -x /usr/sbin/sshd ]]; then
    missing+=("openssh-server")
fi
if ! command -v ssh >/dev/null 2>&1 || ! command -v ssh-keygen >/dev/null 2>&1; then
    missing+=("openssh-client")
fi

# The Compose files' tests: a real Compose implementation that reads them without an engine.
if ! command -v docker-compose >/dev/null 2>&1; then
    missing+=("docker-compose")
fi

# The metrics' tests: a real Prometheus server and promtool (both in Debian's prometheus package).
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
    missing+=("prometheus")
fi

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install_system_deps: Mesa EGL, OSMesa, Chromium, OpenSSH, docker-compose and Prometheus are present; nothing to do"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_system_deps: hint: headless MuJoCo rendering needs Mesa's EGL and OSMesa libraries and the web tests need Chromium (Debian names: ${missing[*]}); install them with your package manager"
    exit 0
fi
if [[ "$(id -u)" -ne 0 ]]; then
    echo "install_system_deps: hint: the platform's tests need ${missing[*]}: run 'sudo scripts/install_system_deps.sh'"
    exit 0
fi

echo "install_system_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
echo "install_system_deps: installed ${missing[*]}"
