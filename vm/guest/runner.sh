# The guest's step runner, /lab/runner.sh: runs the steps of
# /lab/steps.sh (lines `step N NAME 'COMMAND'`, written by the checker) and
# reports each on the result channel, ttyS1, with the run's token (see
# vm/src/channel.rs for the protocol). The token is read from /lab/token,
# which is deleted before any step runs.
read T </lab/token
rm -f /lab/token
[ -n "$T" ] || exit 1
exec 3>/dev/ttyS1
# Shell builtins where they do: each process the runner starts costs a
# few milliseconds of every step under TCG.
step() {
  # The step marker: the console shows where each step starts.
  echo "checker: step $1 $2" >/dev/kmsg
  dmesg -c >/dev/null 2>&1
  read u rest </proc/uptime
  echo "$T start $1 $u" >&3
  sh -c "$3" >/tmp/step.out 2>&1 </dev/null
  st=$?
  read t rest </proc/uptime
  echo "$T begin $1" >&3
  # One more line, so that output without a final newline ends in one.
  echo >>/tmp/step.out
  sed 's/^/|/' /tmp/step.out >&3
  echo "$T kmsg $1" >&3
  dmesg 2>&1 | sed 's/^/|/' >&3
  echo "$T end $1 $st $t" >&3
}
. /lab/steps.sh
echo "$T done" >&3
