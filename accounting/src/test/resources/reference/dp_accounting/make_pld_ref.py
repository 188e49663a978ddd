#!/usr/bin/python3
"""Generates PLD reference fixtures with Google's dp_accounting (PLDAccountant).

Run:  PYTHONPATH=<checkout>/python/dp_accounting /usr/bin/python3 make_pld_ref.py
(source: google/differential-privacy, python/dp_accounting; Debian python3 with python3-numpy,
python3-scipy, python3-absl). Writes pld_eps.csv next to this file.
"""
import csv
import math
import os
import signal
import time

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant

OUT = os.path.dirname(os.path.abspath(__file__))


class Timeout(Exception):
  pass


def _alarm(signum, frame):
  raise Timeout()


def dpsgd(q, sigma, steps):
  ev = dp_accounting.GaussianDpEvent(sigma)
  if q < 1:
    ev = dp_accounting.PoissonSampledDpEvent(q, ev)
  return dp_accounting.SelfComposedDpEvent(ev, steps)


def main():
  signal.signal(signal.SIGALRM, _alarm)
  rows = []
  cases = [(256 / 60000, 1.1, 14063)]
  for q in (0.001, 0.01, 0.1, 1.0):
    for sigma in (0.5, 1.0, 2.0, 5.0):
      for steps in (1, 10, 100, 1000, 10000):
        cases.append((q, sigma, steps))
  for q, sigma, steps in cases:
    signal.alarm(120)
    try:
      start = time.time()
      acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
      acc.compose(dpsgd(q, sigma, steps))
      built = time.time() - start
      for delta in (1e-5, 1e-6):
        eps = acc.get_epsilon(delta)
        rows.append((repr(q), repr(sigma), steps, repr(delta), repr(float(eps)), '%.3f' % built))
        print(q, sigma, steps, delta, eps, '%.2fs' % built, flush=True)
    except Timeout:
      print('timeout', q, sigma, steps, flush=True)
    except MemoryError:
      print('memory', q, sigma, steps, flush=True)
    finally:
      signal.alarm(0)
  with open(os.path.join(OUT, 'pld_eps.csv'), 'w', newline='') as f:
    w = csv.writer(f)
    w.writerow(['q', 'sigma', 'steps', 'delta', 'epsilon', 'seconds'])
    w.writerows(rows)


if __name__ == '__main__':
  main()
