#!/usr/bin/python3
"""A robot agent for the fleet gateway, written in Python from proto/ and docs/robot-link.md only.

It is the robot link's conformance check: it uses nothing of the project but the .proto files, whose
Python stubs it generates into a temporary directory at start with grpc_tools.protoc, and the
standard gRPC and protobuf libraries (Debian python3-grpcio, python3-grpc-tools). It

  1. opens Connect with the robot's id and token as call metadata and sends a Hello with a command
     policy and an instance id; reads the Welcome and acknowledges the first FieldRuleSet;
  2. sends a HealthReport (one fault, two devices);
  3. opens PublishTelemetry and sends batches seq 1..N of one random epoch, encoded by the protobuf
     library (which writes the samples, field 1, before seq and epoch), then the last batch again
     (a resend the gateway must drop), and reads receipts until durable_seq reaches N; then
     half-closes the stream and reads the final receipt;
  4. from then on acknowledges every command (RECEIVED) and every FieldRuleSet (applied), until its
     stdin closes; then it ends its streams and exits 0.

Each step is reported on stdout as one JSON object per line ("event" names it). Errors go to stderr
and end the process with status 1.

  /usr/bin/python3 robot.py --address 127.0.0.1:50051 --robot-id ID --token-env ROBOT_TOKEN \
      --proto-dir proto --batches 10 --samples 5
"""

import argparse
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid


def emit(event, **fields):
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def generate_stubs(proto_dir):
    """Generates the Python modules of proto_dir's fleetgw/v1/*.proto into a temporary directory."""
    out = tempfile.mkdtemp(prefix="fleetgw-py-")
    protos = [
        os.path.join("fleetgw", "v1", name)
        for name in sorted(os.listdir(os.path.join(proto_dir, "fleetgw", "v1")))
        if name.endswith(".proto")
    ]
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", proto_dir, "--python_out", out, "--grpc_python_out", out, *protos],
        check=True,
    )
    sys.path.insert(0, out)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--address", required=True)
    ap.add_argument("--robot-id", required=True)
    # The token is a secret: it comes from the environment, never from the command line.
    ap.add_argument("--token-env", default="ROBOT_TOKEN")
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--t0-ms", type=int, default=int(time.time() * 1000))
    # How long to wait for receipts up to the last seq before half-closing anyway (and reporting it).
    ap.add_argument("--receipt-timeout-s", type=float, default=30)
    args = ap.parse_args()
    token = os.environ[args.token_env]

    stubs = generate_stubs(args.proto_dir)
    try:
        run(args, token)
    finally:
        shutil.rmtree(stubs, ignore_errors=True)


def run(args, token):
    import grpc
    from fleetgw.v1 import robot_link_pb2 as rl
    from fleetgw.v1 import robot_link_pb2_grpc as rl_grpc
    from fleetgw.v1 import telemetry_pb2 as tm

    metadata = (("x-robot-id", args.robot_id), ("authorization", "Bearer " + token))
    channel = grpc.insecure_channel(args.address)
    stub = rl_grpc.RobotLinkStub(channel)

    # Control stream: whatever is put on `outbox` is written, in order; None ends the stream.
    outbox = queue.Queue()

    def requests():
        while True:
            msg = outbox.get()
            if msg is None:
                return
            yield msg

    policy = rl.CommandPolicy(
        allowed_modes=["autonomous", "manual"],
        actions=[rl.ActionSpec(name="beep", arguments_schema_json=json.dumps(
            {"type": "object", "properties": {"times": {"type": "integer", "minimum": 1, "maximum": 5}},
             "required": ["times"], "additionalProperties": False}))],
    )
    outbox.put(rl.RobotMessage(hello=rl.Hello(
        agent_version="python-conformance/1", capabilities=["beep"], policy=policy,
        instance_id=str(uuid.uuid4()),
    )))
    responses = stub.Connect(requests(), metadata=metadata)

    welcomed = threading.Event()
    failed = []

    def control():
        try:
            for msg in responses:
                kind = msg.WhichOneof("body")
                if kind == "welcome":
                    emit("welcome", robot_id=msg.welcome.robot_id, fleet_id=msg.welcome.fleet_id)
                    welcomed.set()
                elif kind == "field_rules":
                    rules = msg.field_rules
                    outbox.put(rl.RobotMessage(field_rule_ack=rl.FieldRuleSetAck(version=rules.version, applied=True)))
                    emit("field_rules", version=rules.version, rules=[
                        {"directive_id": r.directive_id, "type": rl.FieldRuleType.Name(r.type), "name": r.name}
                        for r in rules.rules
                    ])
                elif kind == "command":
                    cmd = msg.command
                    action = cmd.WhichOneof("action")
                    outbox.put(rl.RobotMessage(ack=rl.CommandAck(command_id=cmd.command_id, status=rl.CommandAck.STATUS_RECEIVED)))
                    detail = {}
                    if action == "stop":
                        detail["reason"] = cmd.stop.reason
                    elif action == "set_mode":
                        detail["mode"] = cmd.set_mode.mode
                    emit("command", command_id=cmd.command_id, seq=cmd.seq, action=action, **detail)
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.CANCELLED:
                failed.append(f"Connect ended: {e.code().name} {e.details()}")
                welcomed.set()

    reader = threading.Thread(target=control, daemon=True)
    reader.start()
    if not welcomed.wait(30) or failed:
        raise SystemExit(failed[0] if failed else "no Welcome within 30 s")

    # Health: the full state, after every Welcome (docs/faults.md).
    now_ms = int(time.time() * 1000)
    outbox.put(rl.RobotMessage(health_report=rl.HealthReport(
        ts_ms=now_ms,
        faults=[rl.HealthFault(code="py_drive_overtemp", severity=rl.HEALTH_SEVERITY_ERROR, component="drive_left",
                               message="winding 92 C (limit 85 C)", raised_at_ms=now_ms)],
        devices=[
            rl.DeviceHealth(device_id="drive_left", kind=rl.DEVICE_KIND_DRIVE, level=tm.HEALTH_LEVEL_ERROR,
                            status="overtemp", metrics={"temperature_c": 92.0}),
            rl.DeviceHealth(device_id="battery", kind=rl.DEVICE_KIND_BATTERY, level=tm.HEALTH_LEVEL_OK,
                            status="ok", metrics={"charge_pct": 81.5}),
        ],
    )))
    emit("health_sent", faults=["py_drive_overtemp"], devices=["drive_left", "battery"])

    publish_telemetry(args, stub, metadata, tm)

    # Commands and rule sets are answered by the reader thread until the test closes stdin.
    sys.stdin.read()
    outbox.put(None)
    reader.join(10)
    channel.close()
    if failed:
        raise SystemExit(failed[0])
    emit("done")


def publish_telemetry(args, stub, metadata, tm):
    """Sequenced telemetry: batches 1..N of one epoch, a resend of N, receipts up to N, then the final one."""
    epoch = random.randint(1, 2**53 - 1)
    batches = []
    for seq in range(1, args.batches + 1):
        samples = []
        for i in range(args.samples):
            k = (seq - 1) * args.samples + i
            samples.append(tm.TelemetrySample(
                ts_ms=args.t0_ms + k * 100,
                position=tm.Position(latitude=52.0 + k * 1e-6, longitude=5.0 + k * 1e-6, elevation_m=3.0),
                pose=tm.Pose(x_m=k * 0.1, y_m=0.0, heading_deg=90.0),
                velocity=tm.Velocity(linear_mps=1.0),
                battery=tm.Battery(percent=81.5, voltage_v=48.0),
                mode="autonomous",
                health=tm.Health(level=tm.HEALTH_LEVEL_OK),
                gps_fix=4,
            ))
        batches.append(tm.TelemetryBatch(samples=samples, seq=seq, epoch=epoch))
    first = batches[0].SerializeToString()
    emit("telemetry_encoding", first_byte=first[0])

    sendq = queue.Queue()

    def requests():
        while True:
            b = sendq.get()
            if b is None:
                return
            yield b

    for b in batches:
        sendq.put(b)
    sendq.put(batches[-1])  # a resend: the gateway holds it already and must drop it
    last = args.batches
    receipts = stub.PublishTelemetry(requests(), metadata=metadata)
    # Without receipts up to the last seq the stream is half-closed after the timeout: the final
    # receipt then ends it, and telemetry_done reports how far the receipts came.
    timer = threading.Timer(args.receipt_timeout_s, lambda: sendq.put(None))
    timer.daemon = True
    timer.start()
    durable = 0
    closed = False
    for r in receipts:
        emit("receipt", batches=r.batches, durable_seq=r.durable_seq, epoch=str(r.epoch))
        if r.epoch == epoch:
            durable = max(durable, r.durable_seq)
        if durable >= last and not closed:
            closed = True
            timer.cancel()
            sendq.put(None)
    timer.cancel()
    emit("telemetry_done", sent=last + 1, last_seq=last, durable_seq=durable, epoch=str(epoch))


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - reported, then a failing exit
        sys.stderr.write(f"robot.py: {type(e).__name__}: {e}\n")
        sys.exit(1)
