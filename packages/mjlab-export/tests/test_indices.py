"""Row and index arguments on the robot side (`mjlab.deploy.indices`)."""

import numpy as np
import pytest

from mjlab.deploy.indices import resolve_rows


def test_a_uint8_done_mask_is_refused_not_read_as_rows():
    done = np.array([1, 0, 1, 1], dtype=np.uint8)  # torch's old mask dtype, via .numpy()
    with pytest.raises(TypeError, match="done is a uint8 array") as err:
        resolve_rows(done, 4, name="done")
    assert "mask.astype(bool)" in str(err.value) and "int64" in str(err.value)
    assert resolve_rows(done.astype(bool), 4).tolist() == [0, 2, 3]
    assert resolve_rows(done.astype(np.int64), 4).tolist() == [1, 0, 1, 1]
