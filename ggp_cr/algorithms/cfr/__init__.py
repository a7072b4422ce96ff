"""The full-width CFR family ([S] §1.3, §3.3).

Regret matchers, CFR/CFR+/DCFR/LCFR with depth limits, utility estimators.
"""
