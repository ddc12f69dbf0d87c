#!/usr/bin/env bash
# Mutation testing of the claim decider, the certificate verifier, the Merkle/tile code and
# the proof log's hash chain and vouching
# with cosmic-ray (docs/mutation.md). Never touches the working tree it is called from:
# cosmic-ray mutates files in place, so everything runs in a separate clone with its own venv.
#
#   tools/mutation.sh                      # every target, sampled as in docs/mutation.md
#   tools/mutation.sh decider merkle       # some targets
#   MUTATION_FULL=1 tools/mutation.sh      # every mutant, no sampling (hours on one core)
#   MUTATION_SAMPLE=100 MUTATION_SEED=36 tools/mutation.sh merkle   # another sample
#   tools/mutation.sh --survivors decider  # run the last session's survivors again, with
#                                          # the clone's tests as they are now
#
# A session's mutants are positions in the source it was made from: before --survivors,
# bring only new tests into the clone (git -C /tmp/mut fetch && git -C /tmp/mut checkout
# FETCH_HEAD -- tests/...), not changed sources. A plain run pulls everything first.
#   tools/mutation.sh --resume decider     # go on with an interrupted session
#
# Settings (environment): MUTATION_REPO (default: this repository), MUTATION_CLONE
# (/tmp/mut), MUTATION_VENV (/tmp/mutvenv), MUTATION_OUT (/tmp/mutrun: sessions, reports).
set -euo pipefail

REPO=${MUTATION_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
CLONE=${MUTATION_CLONE:-/tmp/mut}
VENV=${MUTATION_VENV:-/tmp/mutvenv}
OUT=${MUTATION_OUT:-/tmp/mutrun}
COSMIC_RAY=${COSMIC_RAY:-cosmic-ray==8.7.0}

# name | module | functions (empty: all) | sample size | timeout (s) | tests
TARGETS=$(cat <<'T'
decider|solver/battleline/decider.py||50|60|tests/test_decider.py tests/test_formation_oracle.py tests/test_golden.py tests/test_decider_golden.py tests/test_decider_categories.py --deselect tests/test_decider.py::test_the_sat_formula_agrees_with_the_oracle
verifier|solver/battleline/claims.py|verify,_verify_valid,_verify_invalid,_check_formation,_say_wilds,_reject|25|60|tests/test_certificate_fields.py tests/test_certificate_file.py tests/test_golden.py tests/test_decider_golden.py tests/test_certificate_verdicts.py
merkle|proofs/merkle.py||30|30|tests/test_merkle.py tests/test_merkle_exhaustive.py
certificate|proofs/battleline/certificate.py|_unpack,_identities,from_file_model,load_certificate,verify_bounded,verify_file,_verify|15|60|tests/test_certificate_fields.py tests/test_certificate_file.py tests/test_bounded_verify.py tests/test_certificate_inflate.py tests/test_certificate_verdicts.py
tiles|proofs/tiles.py||20|30|tests/test_tiles.py tests/test_tiles_edges.py
log|proofs/log.py|_link_error,prepare_record,line,chain_prepared,chain_any,chain_record,continue_chain,vouch,head_note|40|60|tests/test_proof_log.py tests/test_log_chain.py
T
)

survivors=0
resume=0
if [[ ${1:-} == --survivors ]]; then survivors=1; shift; fi
if [[ ${1:-} == --resume ]]; then resume=1; shift; fi
wanted=("$@")

if [[ ! -d $CLONE/.git ]]; then
    git clone -q "$REPO" "$CLONE"
elif [[ $survivors == 0 && $resume == 0 ]]; then
    git -C "$CLONE" pull -q --ff-only
fi
ln -sfn "$(cd "$REPO/.." && pwd)/shared" "$(dirname "$CLONE")/shared" 2>/dev/null || true
if [[ ! -x $VENV/bin/python ]]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -e "$CLONE" --config-settings editable_mode=strict \
        pytest hypothesis pytest-xdist "$COSMIC_RAY"
elif [[ $survivors == 0 && $resume == 0 ]]; then
    # the strict editable install links each module: relink after a pull added some
    "$VENV/bin/pip" install -q -e "$CLONE" --config-settings editable_mode=strict
fi
# shellcheck disable=SC1091
. "$VENV/bin/activate"
mkdir -p "$OUT"

while IFS='|' read -r name module only sample timeout tests; do
    if [[ ${#wanted[@]} -gt 0 && ! " ${wanted[*]} " == *" $name "* ]]; then continue; fi
    # a test file not in the clone yet (an older commit) is left out, not an error
    files=()
    for t in $tests; do
        if [[ $t == tests/* && ! -e $CLONE/${t%%::*} ]]; then continue; fi
        files+=("$t")
    done
    session=$OUT/$name.sqlite
    cat >"$OUT/$name.toml" <<C
[cosmic-ray]
module-path = "$CLONE/$module"
timeout = $timeout
excluded-modules = []
test-command = "env PYTHONPATH=tools python -m pytest -x -n 0 -q -p no:cacheprovider -p mutation_profile --hypothesis-profile=mutation --basetemp=$OUT/pytest-$name ${files[*]}"

[cosmic-ray.distributor]
name = "local"
C
    if [[ $survivors == 1 ]]; then
        python "$CLONE/tools/mutation_sample.py" "$session" --rerun-survivors
    elif [[ $resume == 1 && -e $session ]]; then
        :
    else
        rm -f "$session"
        cosmic-ray init "$OUT/$name.toml" "$session"
        [[ -n ${MUTATION_SAMPLE:-} ]] && sample=$MUTATION_SAMPLE
        [[ ${MUTATION_FULL:-0} == 1 ]] && sample=0
        python "$CLONE/tools/mutation_sample.py" "$session" --only "$only" --sample "$sample" \
            --seed "${MUTATION_SEED:-35}"
    fi
    start=$(date +%s)
    (cd "$CLONE" && cosmic-ray exec "$OUT/$name.toml" "$session")
    echo "$name: $(($(date +%s) - start)) s"
    cr-report "$session" --show-pending >"$OUT/$name.report.txt" || true
    tail -n 4 "$OUT/$name.report.txt"
done <<<"$TARGETS"
