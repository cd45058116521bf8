"""What the pages say in words: the policy help under each preset, the near-duplicate
caption's number agreement."""

from __future__ import annotations

import pytest
from apptest_support import SELECTION, SIMILARITY, no_error, page

from adagres import PRESETS
from ui.text import both_in_selection


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_policy_help_names_each_presets_policy_and_no_default(pools_dir, preset):
    at = page(SELECTION, pool="tiny", preset=preset)
    no_error(at)
    box = at.selectbox(key="sb_policy")
    assert box.value == PRESETS[preset].settings.policy
    assert "default" not in box.help  # each preset has its own policy
    for policy in {chosen.settings.policy for chosen in PRESETS.values()}:
        names = [name for name, chosen in PRESETS.items() if chosen.settings.policy == policy]
        start = box.help.index(f"{policy}:")
        note = box.help[start : box.help.index(".", start) + 1]
        # Every preset of the policy named in one note, never one note per preset.
        assert all(name in note for name in names) and note.count("(the ") == 1, note


def test_near_duplicate_caption_counts_the_listed_pairs_in_words(pools_dir):
    at = page(SIMILARITY, pool="medium", budget="1500", pairs="0.5")
    no_error(at)
    pairs = next(df.value for df in at.dataframe if "selected" in df.value.columns)
    both = int((pairs["selected"] == "both").sum())
    captions = " ".join(c.value for c in at.caption)
    assert both_in_selection(both, len(pairs)) in captions
    assert " are both in the selection" not in captions
