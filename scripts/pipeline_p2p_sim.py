#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rendezvous simulation of 1F1B pipeline schedules with blocking p2p (docs/model.md, section 5,
"Pipeline p2p: batched or blocking").

Each stage runs an ordered list of actions: ('C', seconds) computes; ('W', [(peer, tag), ...])
posts the listed transfers and waits for all of them. A transfer completes when both sides have
posted it, plus the transfer time `lat` (NCCL send/recv: the sender's and the receiver's kernels
must both run). Two schedules:

* megatron(): Megatron-LM's forward_backward_pipelining_without_interleaving
  (megatron/core/pipeline_parallel/schedules.py): warm-up forwards with recv_forward /
  send_forward, steady 1F1B with the batched send_forward_recv_backward and
  send_backward_recv_forward (p2p_communication.py, batch_isend_irecv), cool-down backwards.
* deepspeed(): DeepSpeed's TrainSchedule (deepspeed/runtime/pipe/schedule.py at microsoft/DeepSpeed
  af8f259), 2 (m + p - 1) steps; a forward step issues RecvActivation, SendGrad, ForwardPass, a
  backward step SendActivation, RecvGrad, BackwardPass, each transfer a blocking call of its own
  (p2p.py at f4079d7: send and recv assert async_op == False).

Prints the step time over the ideal (m + p - 1)(t_f + t_b) per micro-batch slot, in units of
the transfer time: what the op list's 2 (batched) and 4 (blocking) transfers per micro-batch
stand for. Usage: python3 scripts/pipeline_p2p_sim.py
"""


def run(prog, lat=0.0):
    p = len(prog)
    t = [0.0] * p
    pc = [0] * p
    posted = {}
    while True:
        progressed = False
        for s in range(p):
            while pc[s] < len(prog[s]):
                a = prog[s][pc[s]]
                if a[0] == 'C':
                    t[s] += a[1]
                    pc[s] += 1
                    progressed = True
                    continue
                keys = [(min(s, q), max(s, q), tag) for q, tag in a[1]]
                for k in keys:
                    posted.setdefault(k, {})
                    posted[k].setdefault(s, t[s])
                if all(len(posted[k]) == 2 for k in keys):
                    t[s] = max(max(posted[k].values()) for k in keys) + lat
                    pc[s] += 1
                    progressed = True
                    continue
                break
        if all(pc[s] >= len(prog[s]) for s in range(p)):
            return max(t)
        if not progressed:
            raise RuntimeError("deadlock")


def megatron(p, m, tf, tb, lat=0.0):
    prog = []
    for s in range(p):
        a = []
        w = min(p - s - 1, m)
        f = b = 0

        def wait(transfers):
            if transfers:
                a.append(('W', transfers))

        recv_fwd = lambda i: [(s - 1, ('act', i))] if s > 0 else []
        send_fwd = lambda i: [(s + 1, ('act', i))] if s < p - 1 else []
        recv_bwd = lambda j: [(s + 1, ('grad', j))] if s < p - 1 else []
        send_bwd = lambda j: [(s - 1, ('grad', j))] if s > 0 else []
        for _ in range(w):
            wait(recv_fwd(f))
            a.append(('C', tf))
            wait(send_fwd(f))
            f += 1
        rem = m - w
        if rem > 0:
            wait(recv_fwd(f))
        for i in range(rem):
            a.append(('C', tf))
            wait(send_fwd(f) + recv_bwd(b))
            f += 1
            a.append(('C', tb))
            wait(send_bwd(b) if i == rem - 1 else send_bwd(b) + recv_fwd(f))
            b += 1
        for _ in range(w):
            wait(recv_bwd(b))
            a.append(('C', tb))
            wait(send_bwd(b))
            b += 1
        prog.append(a)
    return run(prog, lat)


def deepspeed(p, m, tf, tb, lat=0.0):
    prog = []
    for s in range(p):
        a = []
        prev = None
        valid = lambda x: x is not None and 0 <= x < m
        for k in range(2 * (m + p - 1)):
            # TrainSchedule._step_to_micro_batch
            if k % 2 == 0 and s % 2 == 0:
                mb, fwd = k // 2 - s // 2, True
            elif k % 2 == 1 and s % 2 == 1:
                mb, fwd = (k - 1) // 2 - s // 2, True
            elif k % 2 == 0 and s % 2 == 1:
                mb, fwd = k // 2 - p + (s + 1) // 2, False
            else:
                mb, fwd = (k - 1) // 2 - p + 1 + s // 2, False
            if fwd:  # RecvActivation, then SendGrad
                if valid(mb) and s > 0:
                    a.append(('W', [(s - 1, ('act', mb))]))
                if valid(prev) and s > 0:
                    a.append(('W', [(s - 1, ('grad', prev))]))
            else:  # SendActivation, then RecvGrad
                if valid(prev) and s < p - 1:
                    a.append(('W', [(s + 1, ('act', prev))]))
                if valid(mb) and s < p - 1:
                    a.append(('W', [(s + 1, ('grad', mb))]))
            if valid(mb):
                a.append(('C', tf if fwd else tb))
            prev = mb
        prog.append(a)
    return run(prog, lat)


if __name__ == "__main__":
    tf, tb, lat = 1.0, 3.0, 0.05  # full recompute: backward = recompute forward + 2 x forward
    for p, m in [(4, 8), (8, 16), (16, 32), (16, 192), (32, 96)]:
        ideal = (m + p - 1) * (tf + tb)
        assert megatron(p, m, tf, tb) == ideal and deepspeed(p, m, tf, tb) == ideal
        slots = m + p - 1
        meg = (megatron(p, m, tf, tb, lat) - ideal) / lat / slots
        ds = (deepspeed(p, m, tf, tb, lat) - ideal) / lat / slots
        print(f"p={p:3d} m={m:4d}: exposed transfers per slot: megatron {meg:.2f}, deepspeed {ds:.2f}")
