"""A umask of 002 (the user-private-group scheme of Debian, Ubuntu, Fedora) is no reason to refuse a folder:
group write bits count only when the group is not the user's alone."""

from __future__ import annotations

import grp
import os
import pwd
import stat

import pytest

from scorer import private_files
from scorer.private_files import Untrusted, own_group
from test_numba_cache import _decision, _env, _own_cache, _plant, _subpath

SHARED = 4321  # a group id with no entry: nobody can say who is in it


def _my_private_group() -> int:
    user = pwd.getpwuid(os.geteuid())
    group = grp.getgrgid(user.pw_gid)
    assert group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}, \
        "these tests need the user-private-group scheme for the user running them"
    return user.pw_gid


def test_the_users_private_group_is_its_own_and_others_are_not():
    mine = _my_private_group()
    assert own_group(mine)
    assert not own_group(SHARED)
    others = [g.gr_gid for g in grp.getgrall() if g.gr_gid != mine]
    assert others and not any(own_group(gid) for gid in others)


@pytest.mark.parametrize("mode", [0o770, 0o775, 0o2775])
def test_a_group_writable_folder_of_the_users_own_group_passes(tmp_path, mode):
    folder = tmp_path / "cache"
    folder.mkdir()
    os.chown(folder, -1, _my_private_group())
    folder.chmod(mode)
    private_files.check(folder.stat(), "the folder", folder=True)
    os.chown(folder, -1, SHARED)
    folder.chmod(mode)  # chown clears the setgid bit
    with pytest.raises(Untrusted, match=f"writable by others \\(mode {stat.S_IMODE(mode):o}\\)"):
        private_files.check(folder.stat(), "the folder", folder=True)


def test_world_write_is_refused_whatever_the_group(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    os.chown(folder, -1, _my_private_group())
    folder.chmod(0o777)
    with pytest.raises(Untrusted, match="writable by others"):
        private_files.check(folder.stat(), "the folder", folder=True)


def test_numba_keeps_a_cache_made_under_umask_002_and_says_nothing(tmp_path):
    """The folders and files as numba and git make them with umask 002: 0775 folders, 0664 files."""
    cache = _own_cache(tmp_path)
    for path in (cache, cache / _subpath(), _plant(cache)):
        os.chown(path, -1, _my_private_group())
    cache.chmod(0o775)
    (cache / _subpath()).chmod(0o775)
    (cache / _subpath() / "parse.x-1.py311.nbi").chmod(0o664)
    done = _decision(_env(cache))
    assert (done.stdout.strip(), done.stderr) == (str(cache), "")
    os.chown(cache / _subpath(), -1, SHARED)  # the same modes in a shared group: refused, once, with the reason
    (cache / _subpath()).chmod(0o775)
    done = _decision(_env(cache))
    assert done.stdout.strip() != str(cache) and "writable by others" in done.stderr
