"""One process of a PyTorch job started by srun, as Slurm shops start them.

Reads its global rank, the world size and its local rank from the
environment (--ranks slurm: SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID, the
variables every launcher under srun reads; --ranks topo: TOPO_RANK /
SLURM_NTASKS / TOPO_LOCAL_RANK from spank/topo_aware), joins a gloo process
group over TCP (MASTER_ADDR, MASTER_PORT), and checks from inside PyTorch:

  - all_reduce of (rank + 1) over every rank gives world * (world + 1) / 2;
  - all_gather of each rank's host (SLURMD_NODENAME): rank 0 prints one
    line per rank, "HOST <rank> <host>", for the caller to compare with the
    ring order (TOPO_RING_ORDER), and the ring check itself when given.

Prints "SUM <rank> <got> <want>" per rank and "RING ok" / "RING bad ..."
from rank 0.  Exits non-zero on a wrong sum.  Run with /usr/bin/python3
(Debian's python3-torch).
"""
import argparse
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", choices=("slurm", "topo"), required=True)
    args = ap.parse_args()

    if args.ranks == "slurm":
        rank = int(os.environ["SLURM_PROCID"])
        local = int(os.environ["SLURM_LOCALID"])
    else:
        rank = int(os.environ["TOPO_RANK"])
        local = int(os.environ["TOPO_LOCAL_RANK"])
    world = int(os.environ["SLURM_NTASKS"])
    host = os.environ["SLURMD_NODENAME"]
    # What torchrun would hand each worker.
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(world)
    os.environ["LOCAL_RANK"] = str(local)

    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=120))
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    want = world * (world + 1) / 2
    print(f"SUM {rank} {int(t.item())} {int(want)}", flush=True)

    hosts = [None] * world
    dist.all_gather_object(hosts, host)
    if rank == 0:
        for r, h in enumerate(hosts):
            print(f"HOST {r} {h}", flush=True)
        ring = os.environ.get("TOPO_RING_ORDER", "")
        if ring:
            order = ring.split(",")
            per_node = world // len(order)
            bad = [
                f"{r}:{h}!={order[r // per_node]}"
                for r, h in enumerate(hosts)
                if world % len(order) or h != order[r // per_node]
            ]
            print("RING ok" if not bad else "RING bad " + " ".join(bad[:8]), flush=True)
        else:
            print("RING none", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0 if t.item() == want else 1


if __name__ == "__main__":
    sys.exit(main())
