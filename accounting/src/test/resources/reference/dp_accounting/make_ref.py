#!/usr/bin/python3
"""Generates reference fixtures with Google's dp_accounting (RDP accountant).

Run:  PYTHONPATH=/tmp/ref/src/python/dp_accounting /usr/bin/python3 /tmp/ref/make_ref.py
(source: google/differential-privacy, python/dp_accounting, extracted to
/tmp/ref/src/python/dp_accounting)
"""
import csv
import math
import os

from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp_mod

OUT = os.path.dirname(os.path.abspath(__file__))
Q_MNIST = 256 / 60000  # 0.004266666666666667


def f(x):
  """repr of a float (17 significant digits as needed, 'inf'/'nan')."""
  return repr(float(x))


def dpsgd(q, sigma, steps):
  return dp_event.SelfComposedDpEvent(
      dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)


def accountant_for(event):
  acc = rdp_mod.RdpAccountant()  # DEFAULT orders, ADD_OR_REMOVE_ONE
  acc.compose(event)
  return acc


def main():
  assert repr(Q_MNIST) == '0.004266666666666667'
  orders = list(rdp_mod.DEFAULT_RDP_ORDERS)
  with open(os.path.join(OUT, 'orders.txt'), 'w') as fh:
    assert len(orders) == 156
    for o in orders:
      fh.write(f(o) + '\n')

  # a. DP-SGD epsilon grid.
  with open(os.path.join(OUT, 'dpsgd_eps.csv'), 'w', newline='') as fh:
    w = csv.writer(fh, lineterminator='\n')
    w.writerow(['q', 'sigma', 'steps', 'delta', 'epsilon', 'order'])
    for q in [0.001, Q_MNIST, 0.01, 0.05, 0.1, 0.5, 1.0]:
      for sigma in [0.5, 0.8, 1.0, 1.1, 2.0, 5.0]:
        for steps in [1, 100, 1000, 14063]:
          acc = accountant_for(dpsgd(q, sigma, steps))
          for delta in [1e-5, 1e-6]:
            eps, order = acc.get_epsilon_and_optimal_order(delta)
            w.writerow([f(q), f(sigma), steps, f(delta), f(eps), f(order)])

  # b. Single-step RDP curve at every default order.
  with open(os.path.join(OUT, 'rdp_curve.csv'), 'w', newline='') as fh:
    w = csv.writer(fh, lineterminator='\n')
    w.writerow(['q', 'sigma', 'order', 'rdp'])
    for q, sigma in [(0.01, 1.1), (Q_MNIST, 1.1), (0.1, 0.8), (0.5, 2.0),
                     (1.0, 1.0), (0.05, 0.5)]:
      direct = rdp_mod._compute_rdp_poisson_subsampled_gaussian(
          q, sigma, orders)
      acc = accountant_for(dpsgd(q, sigma, 1))
      assert all(a == b for a, b in zip(direct, acc.rdp)), (q, sigma)
      for o, r in zip(orders, direct):
        w.writerow([f(q), f(sigma), f(o), f(r)])

  # c. delta from epsilon.
  with open(os.path.join(OUT, 'delta.csv'), 'w', newline='') as fh:
    w = csv.writer(fh, lineterminator='\n')
    w.writerow(['q', 'sigma', 'steps', 'epsilon', 'delta'])
    for q in [0.01, Q_MNIST]:
      for sigma in [1.0, 1.1]:
        for steps in [1000, 14063]:
          acc = accountant_for(dpsgd(q, sigma, steps))
          for eps in [0.5, 1.0, 3.0, 8.0]:
            w.writerow([f(q), f(sigma), steps, f(eps), f(acc.get_delta(eps))])

  # d. RepeatAndSelect.
  names = {math.inf: 'poisson', 1.0: 'geometric', 0.0: 'logarithmic'}
  with open(os.path.join(OUT, 'repeat_select.csv'), 'w', newline='') as fh:
    w = csv.writer(fh, lineterminator='\n')
    w.writerow(['q', 'sigma', 'steps', 'distribution', 'mean', 'eta', 'delta',
                'epsilon', 'order'])
    for q, sigma, steps in [(0.01, 1.0, 1000), (Q_MNIST, 1.1, 2345)]:
      base = dpsgd(q, sigma, steps)
      for mean, shape in [(10.0, math.inf), (10.0, 1.0), (10.0, 0.0),
                          (10.0, 0.5), (100.0, math.inf)]:
        acc = accountant_for(dp_event.RepeatAndSelectDpEvent(base, mean, shape))
        delta = 1e-5
        eps, order = acc.get_epsilon_and_optimal_order(delta)
        dist = names.get(shape, 'truncated_negative_binomial')
        w.writerow([f(q), f(sigma), steps, dist, f(mean), f(shape), f(delta),
                    f(eps), f(order)])

  # e. Known MNIST values.
  with open(os.path.join(OUT, 'known.txt'), 'w') as fh:
    for epochs in [60, 15]:
      steps = math.ceil(epochs * 60000 / 256)
      acc = accountant_for(dpsgd(Q_MNIST, 1.1, steps))
      eps, order = acc.get_epsilon_and_optimal_order(1e-5)
      fh.write(f'q={f(Q_MNIST)} sigma=1.1 epochs={epochs} steps={steps} '
               f'delta=1e-05 epsilon={f(eps)} order={f(order)}\n')


if __name__ == '__main__':
  main()
