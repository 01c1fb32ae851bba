"""The catalog's options in `GET /v0/envs`, and the `field` of 422 answers (the broker's and FastAPI's)."""

from __future__ import annotations

from simulusion.control.v1 import control_pb2 as ctl

PONG = ctl.CatalogEntry(
    id="pong", description="Atari Pong", factory="platform_envs.adapters.atari:make_env", kwargs_json='{"game": "pong"}',
    family="Atari",
    options=[
        ctl.EnvOption(name="frameskip", type="int", default_json="4", minimum=1, help="Emulated frames per decision."),
        ctl.EnvOption(name="repeat_action_probability", type="float", default_json="0.25", minimum=0, maximum=1,
                      help="Sticky actions."),
        ctl.EnvOption(name="mode", type="choice", default_json="null", choices_json=["0", "1"], help="Game mode."),
        ctl.EnvOption(name="quality", type="choice", default_json='"fast"', choices_json=['"fast"', '"full"']),
        ctl.EnvOption(name="player", type="string", default_json='"anon"'),
        ctl.EnvOption(name="endless", type="bool", default_json="false", help="No time limit."),
    ],
)


async def test_envs_carry_their_family_and_options(gateway, broker) -> None:
    broker.entries.append(PONG)
    response = await gateway.http.get("/v0/envs")
    assert response.status_code == 200
    cartpole, pong = response.json()["data"]
    assert (cartpole["family"], cartpole["options"]) == ("", [])  # what the broker says, as it says it
    assert pong["family"] == "Atari" and pong["kwargs"] == {"game": "pong"}
    assert pong["options"] == [
        {"name": "frameskip", "type": "int", "default": 4, "minimum": 1, "maximum": None, "choices": None,
         "help": "Emulated frames per decision."},
        {"name": "repeat_action_probability", "type": "float", "default": 0.25, "minimum": 0.0, "maximum": 1.0,
         "choices": None, "help": "Sticky actions."},
        {"name": "mode", "type": "choice", "default": None, "minimum": None, "maximum": None, "choices": [0, 1],
         "help": "Game mode."},
        {"name": "quality", "type": "choice", "default": "fast", "minimum": None, "maximum": None,
         "choices": ["fast", "full"], "help": ""},
        {"name": "player", "type": "string", "default": "anon", "minimum": None, "maximum": None, "choices": None,
         "help": ""},
        {"name": "endless", "type": "bool", "default": False, "minimum": None, "maximum": None, "choices": None,
         "help": "No time limit."},
    ]
    assert isinstance(pong["options"][0]["minimum"], int)  # an int option's bounds read as ints


async def test_envs_say_whether_they_take_free_kwargs(gateway, broker) -> None:
    own = ctl.CatalogEntry(id="mine", description="my factory", factory="my_envs:make", family="Custom",
                           free_kwargs=True)
    broker.entries.extend([PONG, own])
    data = (await gateway.http.get("/v0/envs")).json()["data"]
    assert [(entry["id"], entry["free_kwargs"]) for entry in data] == [("cartpole", False), ("pong", False),
                                                                        ("mine", True)]
    schemas = (await gateway.http.get("/openapi.json")).json()["components"]["schemas"]
    assert schemas["EnvPublic"]["properties"]["free_kwargs"]["type"] == "boolean"


async def test_envs_say_how_many_gpus_their_instance_needs(gateway, broker) -> None:
    broker.entries.append(ctl.CatalogEntry(id="render", description="a GPU renderer", image="org/render:1",
                                           family="Custom", gpus=2))
    data = (await gateway.http.get("/v0/envs")).json()["data"]
    assert [(entry["id"], entry["gpus"]) for entry in data] == [("cartpole", 0), ("render", 2)]


async def test_an_undeclared_kwarg_the_broker_refuses_is_a_422_naming_it(gateway, broker) -> None:
    message = ("kwargs.xml_file is not an option of 'ant': it takes frame_skip, endless "
               "(a catalog.toml entry takes other kwargs with free_kwargs = true)")
    broker.create_error = ctl.ControlError(code="invalid_argument", message=message, field="kwargs.xml_file")
    response = await gateway.http.post("/v0/sessions", json={"env_id": "ant", "kwargs": {"xml_file": "/etc/passwd"}})
    assert response.status_code == 422
    assert response.json() == {"detail": message, "code": "invalid_argument", "field": "kwargs.xml_file"}


async def test_the_openapi_document_describes_the_options_and_the_field(gateway) -> None:
    schemas = (await gateway.http.get("/openapi.json")).json()["components"]["schemas"]
    option = schemas["EnvOptionPublic"]
    assert option["properties"]["type"]["enum"] == ["int", "float", "bool", "string", "choice", "list"]
    assert option["required"] == ["name", "type", "default"]  # the rest default to null / ""
    env = schemas["EnvPublic"]["properties"]
    assert env["options"]["items"] == {"$ref": "#/components/schemas/EnvOptionPublic"} and "family" in env
    field = schemas["ErrorPublic"]["properties"]["field"]
    assert field["anyOf"] == [{"type": "string"}, {"type": "null"}]


async def test_a_brokers_invalid_kwarg_is_a_422_naming_its_field(gateway, broker) -> None:
    message = "kwargs.frameskip of 'pong' must be an integer >= 1, not 0 (Emulated frames per decision.)"
    broker.create_error = ctl.ControlError(code="invalid_argument", message=message, field="kwargs.frameskip")
    response = await gateway.http.post("/v0/sessions", json={"env_id": "pong", "kwargs": {"frameskip": 0}})
    assert response.status_code == 422
    assert response.json() == {"detail": message, "code": "invalid_argument", "field": "kwargs.frameskip"}


async def test_an_error_about_no_field_has_none(gateway, broker) -> None:
    broker.create_error = ctl.ControlError(code="unavailable", message="no env host is live")
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})
    assert response.status_code == 503 and "field" not in response.json()


async def test_fastapis_validation_errors_name_their_field(gateway, broker) -> None:
    for body, field in (
        ({"env_id": "cartpole", "jpeg_quality": 101}, "jpeg_quality"),
        ({"env_id": "cartpole", "kwargs": [1, 2]}, "kwargs"),
        ({"kwargs": {}}, "env_id"),
        ({"env_id": "cartpole", "num_envs": "many"}, "num_envs"),
    ):
        response = await gateway.http.post("/v0/sessions", json=body)
        assert response.status_code == 422, body
        answer = response.json()
        assert answer["code"] == "invalid_argument" and answer["field"] == field, (body, answer)
        assert field in answer["detail"]
    unreadable = await gateway.http.post("/v0/sessions", content=b"{nope", headers={"Content-Type": "application/json"})
    assert unreadable.status_code == 422 and "field" not in unreadable.json()  # the body as a whole
