"""Convert between protobuf values (Tensor, Value, Data) and NumPy / Python objects.

Arrays always travel as raw bytes with their dtype and shape, never as JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from simulusion.env.v1 import values_pb2 as pb

# dtype <-> its name on the wire ("float32", "<f4" -> "f4"), cached: both are on the step path.
_DTYPE_NAMES: dict[np.dtype, str] = {}
_DTYPES: dict[str, np.dtype] = {}


def fill_tensor(tensor: pb.Tensor, array: Any) -> None:
    """Write `array` into `tensor` in place (no intermediate message to copy)."""
    a = np.asarray(array)
    dtype = a.dtype
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        if dtype.kind == "O":
            raise TypeError(f"cannot encode an object array of shape {a.shape}")
        if dtype.byteorder == ">":
            a = a.astype(dtype.newbyteorder("<"))
            dtype = a.dtype
        name = tensor_dtype_name(dtype)
    tensor.dtype = name
    tensor.shape.extend(a.shape)
    tensor.data = a.tobytes()  # C order, whatever the array's layout


def tensor_dtype_name(dtype: np.dtype) -> str:
    """The name of a (little-endian or byte-order-free) `dtype` on the wire: "float32" -> "f4"."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES.setdefault(dtype, dtype.str.lstrip("<|="))
    return name


def tensor_from_array(array: Any) -> pb.Tensor:
    tensor = pb.Tensor()
    fill_tensor(tensor, array)
    return tensor


def tensor_dtype(tensor: pb.Tensor) -> np.dtype[Any]:
    """The NumPy dtype a tensor's header names (looked up once per name)."""
    name = tensor.dtype
    dtype = _DTYPES.get(name)
    if dtype is None:
        dtype = _DTYPES.setdefault(name, np.dtype(name))
    return dtype


def array_from_tensor(tensor: pb.Tensor) -> np.ndarray:
    array = np.frombuffer(tensor.data, dtype=tensor_dtype(tensor)).reshape(tensor.shape)
    return array.copy()


def value_from_python(obj: Any) -> pb.Value:
    """Encode a value whose space is not known: ints are Discrete, arrays Tensors."""
    if isinstance(obj, pb.Value):
        return obj
    if isinstance(obj, (bool, np.bool_)):
        return pb.Value(tensor=tensor_from_array(np.asarray(obj)))
    if isinstance(obj, (int, np.integer)) and np.ndim(obj) == 0:
        return pb.Value(discrete=int(obj))
    if isinstance(obj, Mapping):
        return pb.Value(
            dict=pb.DictValue(entries=[pb.NamedValue(name=str(k), value=value_from_python(v)) for k, v in obj.items()])
        )
    if isinstance(obj, tuple):
        return pb.Value(tuple=pb.TupleValue(values=[value_from_python(v) for v in obj]))
    return pb.Value(tensor=tensor_from_array(obj))


def python_from_value(value: pb.Value) -> Any:
    """Decode a Value: Tensors become arrays, Discrete np.int64, Dict a dict, Tuple a tuple."""
    kind = value.WhichOneof("kind")
    if kind == "tensor":
        return array_from_tensor(value.tensor)
    if kind == "discrete":
        return np.int64(value.discrete)
    if kind == "dict":
        return {e.name: python_from_value(e.value) for e in value.dict.entries}
    if kind == "tuple":
        return tuple(python_from_value(v) for v in value.tuple.values)
    raise ValueError("empty Value: no kind is set")


def data_from_python(obj: Any) -> pb.Data:
    """Encode free-form data (info dicts, agent data). Unknown objects become their repr."""
    if obj is None:
        return pb.Data(null=True)
    if isinstance(obj, (bool, np.bool_)):
        return pb.Data(flag=bool(obj))
    if isinstance(obj, (int, np.integer)):
        value = int(obj)
        if -(2**63) <= value < 2**63:
            return pb.Data(integer=value)
        return pb.Data(number=float(value))
    if isinstance(obj, (float, np.floating)):
        return pb.Data(number=float(obj))
    if isinstance(obj, str):
        return pb.Data(text=obj)
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return pb.Data(list=pb.DataList(items=[data_from_python(x) for x in obj.tolist()]))
        return pb.Data(tensor=tensor_from_array(obj))
    if isinstance(obj, Mapping):
        return pb.Data(map=datamap_from_dict(obj))
    if isinstance(obj, (list, tuple)):
        return pb.Data(list=pb.DataList(items=[data_from_python(x) for x in obj]))
    return pb.Data(text=repr(obj))


def python_from_data(data: pb.Data) -> Any:
    kind = data.WhichOneof("kind")
    if kind == "number":
        return data.number
    if kind == "integer":
        return data.integer
    if kind == "flag":
        return data.flag
    if kind == "text":
        return data.text
    if kind == "tensor":
        return array_from_tensor(data.tensor)
    if kind == "map":
        return dict_from_datamap(data.map)
    if kind == "list":
        return [python_from_data(x) for x in data.list.items]
    return None


def datamap_from_dict(mapping: Mapping[str, Any] | None) -> pb.DataMap:
    result = pb.DataMap()
    for key, value in (mapping or {}).items():
        result.fields[str(key)].CopyFrom(data_from_python(value))
    return result


def dict_from_datamap(datamap: pb.DataMap) -> dict[str, Any]:
    return {key: python_from_data(value) for key, value in datamap.fields.items()}


def json_from_data(data: pb.Data) -> Any:
    """Like python_from_data, but arrays become lists and non-finite floats strings, for JSON."""
    obj = python_from_data(data)
    return _jsonable(obj)


def json_from_datamap(datamap: pb.DataMap) -> dict[str, Any]:
    return {key: json_from_data(value) for key, value in datamap.fields.items()}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj
