#!/usr/bin/env bash
# Starts the machine's PostgreSQL and Mosquitto when they are installed but not running.
# Missing software is not an error here: the tests that need a service report it themselves.
set -u

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  for _ in $(seq 1 50); do port_open "$1" && return 0; sleep 0.2; done
  return 1
}

if ! port_open 5432; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    for v in $(ls /etc/postgresql); do
      pg_ctlcluster --skip-systemctl-redirect "$v" main start >/dev/null 2>&1 || true
    done
    wait_port 5432 && echo "services: started PostgreSQL" || echo "services: PostgreSQL did not come up on 127.0.0.1:5432"
  else
    echo "services: PostgreSQL is not installed; real-PostgreSQL tests will be skipped"
  fi
fi

if ! port_open 1883; then
  if command -v mosquitto >/dev/null 2>&1; then
    if [ -f /etc/mosquitto/mosquitto.conf ]; then
      mosquitto -d -c /etc/mosquitto/mosquitto.conf >/dev/null 2>&1 || true
    else
      mosquitto -d -p 1883 >/dev/null 2>&1 || true
    fi
    wait_port 1883 && echo "services: started Mosquitto" || echo "services: Mosquitto did not come up on 127.0.0.1:1883"
  else
    echo "services: Mosquitto is not installed; real-broker tests will be skipped"
  fi
fi
exit 0
