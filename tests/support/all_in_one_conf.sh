# all_in_one_conf.sh — sourced by the scripts that run the all-in-one daemon
# (benchmarks, valgrind): ports.sh (free_port, port_block, fixed_port), and
# write_all_in_one_conf, which writes a conf.d with the shipped default's
# roles (namesrv + broker-client-mgr + filter + store) on loopback, the
# NameServer on a fixed free port (the broker registers to it) and the
# broker on an ephemeral one.

# shellcheck source=ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# write_all_in_one_conf DIR PLUGIN_DIR NS_PORT IO_THREADS STORE_SETTINGS
#   [BCM_SETTINGS] [BROKER_SERVER_EXTRA] [STORE_SO]
# DIR gets conf.d/ and state/ (state_dir); STORE_SETTINGS/BCM_SETTINGS are
# libconfig statements inside the plugin's settings group, BROKER_SERVER_EXTRA
# statements inside the broker server's group (e.g. a tls group), STORE_SO
# another store.so than PLUGIN_DIR's.
write_all_in_one_conf() {
  local dir=$1 plugins=$2 ns=$3 iot=$4 store=$5 bcm=${6:-} broker_extra=${7:-}
  local store_so=${8:-$plugins/store.so}
  mkdir -p "$dir/conf.d" "$dir/state"
  cat >"$dir/conf.d/host.conf" <<CONF
state_dir = "$dir/state";
io_threads = $iot;
log_level = "warn";
servers = { namesrv = { listen = "127.0.0.1:$ns"; };
            broker = { listen = "127.0.0.1:0"; $broker_extra }; };
CONF
  cat >"$dir/conf.d/10-namesrv.conf" <<CONF
plugin = { name = "namesrv"; path = "$plugins/namesrv.so"; server = "namesrv"; };
CONF
  cat >"$dir/conf.d/20-bcm.conf" <<CONF
plugin = { name = "broker-client-mgr"; path = "$plugins/broker-client-mgr.so"; server = "broker";
  settings = { namesrvAddr = "127.0.0.1:$ns"; brokerIP1 = "127.0.0.1"; $bcm }; };
CONF
  cat >"$dir/conf.d/30-filter.conf" <<CONF
plugin = { name = "filter"; path = "$plugins/filter.so"; server = "broker"; };
CONF
  cat >"$dir/conf.d/40-store.conf" <<CONF
plugin = { name = "store"; path = "$store_so"; server = "broker"; settings = { $store }; };
CONF
}
