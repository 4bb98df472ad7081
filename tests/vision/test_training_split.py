"""Which ``train`` photos a training run fits on and which it is judged on (``data.fit_and_held_out``)."""

from __future__ import annotations

from models.training import data
from models.training.heldout import HERE, fitted_on_held_out, heldout_names


def test_a_recipe_run_never_fits_on_the_photos_it_is_judged_on(real_dataset):
    names = data.split_names()["train"]
    fit, held_out = data.fit_and_held_out(names)
    assert len(held_out) == data.HELD_OUT_PHOTOS
    assert not set(fit) & set(held_out)
    assert sorted(fit + held_out) == sorted(names)


def test_the_final_fit_takes_every_train_photo_and_names_the_same_held_out_ones(real_dataset):
    names = data.split_names()["train"]
    fit, held_out = data.fit_and_held_out(names, all_photos=True)
    assert sorted(fit) == sorted(names)
    assert held_out == data.fit_and_held_out(names)[1]


def test_the_held_out_photos_drawn_again_are_those_the_shipped_run_recorded(real_dataset):
    assert heldout_names(None) == heldout_names(HERE / "validation.json")


def test_no_test_photo_is_ever_fitted_on(real_dataset):
    test = set(data.split_names()["test"])
    assert not test & set(data.fit_and_held_out(data.split_names()["train"], all_photos=True)[0])


def test_a_run_that_trained_on_its_held_out_photos_says_so(tmp_path):
    recipe, final = tmp_path / "recipe.json", tmp_path / "final.json"
    recipe.write_text('{"model": "a", "val_names": ["x"], "fit_on_held_out": false}')
    final.write_text('{"model": "b", "val_names": ["x"], "fit_on_held_out": true}')
    older = tmp_path / "older.json"
    older.write_text('{"model": "c", "val_names": ["x"]}')  # written before the flag existed
    assert fitted_on_held_out(final)
    assert not fitted_on_held_out(recipe) and not fitted_on_held_out(older)
    assert not fitted_on_held_out(None) and not fitted_on_held_out(tmp_path / "missing.json")
