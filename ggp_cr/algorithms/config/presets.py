"""The thesis's configurations and the named choices, written once ([S] §5.1, Table 5.2).

The algorithms and the registry's defaults read these; nothing here imports an
algorithm.
"""

# [S] Table 5.2's full-width configurations and the thesis's candidate DCFR
# ([S] §5.1.1), as GeneralCFRSolver arguments.
CFR_PRESETS = {
    name: dict(regret_matcher=rm, alternating_updates=alternating,
               cumulative_strategy_exponent=cse)
    for name, rm, alternating, cse in (
        ("cfr", "rm", False, 0.0),
        ("cfr-au", "rm", True, 0.0),
        ("deepstack-cfr", "rm+", False, 0.0),
        ("cfr+", "rm+", True, 1.0),
        ("cfr+2", "rm+", True, 2.0),
        ("lcfr", "drm(1,1)", True, 1.0),
        ("dcfr", "drm(1.5,0)", True, 2.0),
        ("thesis-dcfr", "drm(1.5,0.5)", True, 1.5),
    )
}
# [S]'s CFR+ as its Java code runs it (cfr/cfr.py, cfrplayground): what the thesis's
# CFR+ figures measure, e.g. its ch. 6 trunks.
CFR_PRESETS["cfrplayground-cfr+"] = dict(CFR_PRESETS["cfr+"], cfrplayground=True)

# Outcome-sampling settings (registry parameter names): OpenSpiel's defaults, and the
# thesis's MC-CFR and VR-MCCFR candidates MC-CFR{DRM(1,1), cse 0.3, e 0.7} and that
# + ExpAvg{0.3} ([S] §5.1.2).
OPENSPIEL_OUTCOME_SAMPLING = dict(rm="rm", e=0.6, cse=0.0, bl="none")
THESIS_MC_CFR = dict(rm="drm(1,1)", e=0.7, cse=0.3, bl="none")
THESIS_VR_MCCFR = dict(THESIS_MC_CFR, bl="expavg(0.3)")

# Targeting of online outcome sampling ([S] §1.4.1): information-set or public-subgame.
IST = "ist"
PST = "pst"
TARGETING_SCHEMES = (IST, PST)

# How the online players choose between the compiled and the live solver.
COMPILED_CHOICES = ("auto", "true", "false")

# The online solving player's solvers and default ([S] §3.4.2, §5.2.2: IST, delta 0.1).
ONLINE_SOLVERS = ("os_mccfr", "mc_cfr", "vr_mccfr")
DEFAULT_ONLINE_SOLVER = "vr_mccfr(delta=0.1)"

# Continual resolving's subgame solvers ([S] §5.2.3) and gadgets ([S] §1.4.2, [H]).
CR_SOLVERS = ("vr_mccfr", "mc_cfr", "cfr+", "dl_cfr+")
CR_SAMPLING_SOLVERS = ("vr_mccfr", "mc_cfr")
GADGET_VARIANTS = ("resolve", "max_margin", "unsafe")
# The resolve gadget's Terminate values: CFR-D's ([S] §1.4.2), or as CFRPlayground's
# continual resolving computes them (resolving.gadget.prefix.terminate_scale).
TERMINATE_VALUES = ("cfrd", "cfrplayground")

# Meyer's mixed ES/OS sampling ([M] §5.2–5.3).
MIXING_SCHEDULES = ("es", "os", "linear", "exponential")
LOCUS_CRITERIA = ("iteration", "exponential", "visits")

CFR_UPDATES = ("alternating", "simultaneous")

# How OpenSpiel's ISMCTS bot picks its move from the search statistics.
ISMCTS_FINAL_POLICIES = ("visits", "max_visits", "max_value")

# Issue 44's games past the compiled tree's default limit (benchmarks any_size_budget
# and any_size_quality), as registry.load_game strings.
ANY_SIZE_GAMES = ("python_ii_goofspiel(num_cards=6)", "python_ii_goofspiel(num_cards=7)",
                  "python_ii_goofspiel(num_cards=8)", "python_ii_goofspiel(num_cards=13)",
                  "python_princess_monster(max_turns=12,rows=4,cols=4)",
                  "python_leduc(cards_per_suit=100)", "liars_dice(numdice=2)",
                  "phantom_ttt")
