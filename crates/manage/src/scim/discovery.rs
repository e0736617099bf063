//! SCIM discovery (RFC 7644 §4, RFC 7643 §5–§7): `/ServiceProviderConfig`, `/ResourceTypes` and
//! `/Schemas`, advertising exactly what this service does: PATCH, filtering (up to
//! `max_results` per page), sorting (`super::sort`), ETags, bulk (`super::bulk`); no password
//! change; two
//! resource types, User (with the attributes a person has here, and the enterprise User
//! extension, RFC 7643 §4.3, without filtering or sorting on it) and Group (`displayName`,
//! `externalId`, `members` that are people). `emails` and `active` are `required`: every
//! person here has an address and a state, so neither can be removed (creates are lenient: an
//! address may come as `userName`, and `active` defaults to true).

use super::ScimSettings;
use super::filter::MAX_FILTER_CHARS;
use serde_json::{Value, json};

const USER: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE: &str = super::resource::ENTERPRISE_SCHEMA;
const GROUP: &str = super::group_filter::GROUP_SCHEMA;
const SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Schema";
const RESOURCE_TYPE: &str = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
const LIST: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

/// `/ServiceProviderConfig` (RFC 7643 §5).
pub fn service_provider_config(settings: &ScimSettings, base: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
        "documentationUri": "https://github.com/svc/svc#scim-20-provisioning",
        "patch": {"supported": true},
        "bulk": {
            "supported": true,
            "maxOperations": super::bulk::MAX_BULK_OPERATIONS,
            "maxPayloadSize": settings.max_body_bytes,
        },
        "filter": {"supported": true, "maxResults": settings.max_results},
        "changePassword": {"supported": false},
        "sort": {"supported": true},
        "etag": {"supported": true},
        "authenticationSchemes": [{
            "type": "oauthbearertoken",
            "name": "SCIM bearer token",
            "description": format!(
                "A svcscim_ token issued through the management API (POST /api/v1/scim/tokens), \
                 as Authorization: Bearer. Filters are at most {MAX_FILTER_CHARS} characters."
            ),
            "primary": true,
        }],
        "meta": {
            "resourceType": "ServiceProviderConfig",
            "location": format!("{base}/ServiceProviderConfig"),
        },
    })
}

/// The User resource type (RFC 7643 §6).
pub fn user_resource_type(base: &str) -> Value {
    json!({
        "schemas": [RESOURCE_TYPE],
        "id": "User",
        "name": "User",
        "endpoint": "/Users",
        "description": "A person of the tenant (or of the token's organization)",
        "schema": USER,
        "schemaExtensions": [{"schema": ENTERPRISE, "required": false}],
        "meta": {"resourceType": "ResourceType", "location": format!("{base}/ResourceTypes/User")},
    })
}

/// The Group resource type (RFC 7643 §6).
pub fn group_resource_type(base: &str) -> Value {
    json!({
        "schemas": [RESOURCE_TYPE],
        "id": "Group",
        "name": "Group",
        "endpoint": "/Groups",
        "description": "A group of people in the token's scope (the tenant, or its organization)",
        "schema": GROUP,
        "schemaExtensions": [],
        "meta": {"resourceType": "ResourceType", "location": format!("{base}/ResourceTypes/Group")},
    })
}

/// `/ResourceTypes` as a ListResponse.
pub fn resource_types(base: &str) -> Value {
    list(vec![user_resource_type(base), group_resource_type(base)])
}

fn attribute(
    name: &str,
    description: &str,
    required: bool,
    unique: &str,
    mutability: &str,
) -> Value {
    json!({
        "name": name, "type": "string", "multiValued": false, "description": description,
        "required": required, "caseExact": false, "mutability": mutability,
        "returned": "default", "uniqueness": unique,
    })
}

/// The core User schema as this service supports it (RFC 7643 §7, §4.1).
pub fn user_schema(base: &str) -> Value {
    let mut external = attribute(
        "externalId",
        "The directory's own identifier of the person",
        false,
        "none",
        "readWrite",
    );
    external["caseExact"] = json!(true);
    json!({
        "schemas": [SCHEMA],
        "id": USER,
        "name": "User",
        "description": "A person",
        "attributes": [
            attribute("userName", "Unique identifier of the person, compared ignoring case",
                true, "server", "readWrite"),
            external,
            {
                "name": "name", "type": "complex", "multiValued": false,
                "description": "The person's name", "required": false, "mutability": "readWrite",
                "returned": "default", "uniqueness": "none",
                "subAttributes": [
                    attribute("givenName", "Given name", false, "none", "readWrite"),
                    attribute("familyName", "Family name", false, "none", "readWrite"),
                ],
            },
            attribute("displayName", "Full name", false, "none", "readWrite"),
            {
                "name": "emails", "type": "complex", "multiValued": true,
                "description": "The person's sign-in address (one, primary); required, as every \
                    person here has one (a create may give it as a userName that is an address \
                    instead)",
                "required": true, "mutability": "readWrite", "returned": "default",
                "uniqueness": "none",
                "subAttributes": [
                    attribute("value", "The address", true, "none", "readWrite"),
                    {
                        "name": "type", "type": "string", "multiValued": false,
                        "description": "Always work (the sign-in address); set by the server",
                        "required": false, "caseExact": false,
                        "canonicalValues": ["work"], "mutability": "readOnly",
                        "returned": "default", "uniqueness": "none",
                    },
                    {
                        "name": "primary", "type": "boolean", "multiValued": false,
                        "description": "Always true (a person has one address); set by the \
                            server", "required": false,
                        "mutability": "readOnly", "returned": "default",
                    },
                ],
            },
            {
                "name": "active", "type": "boolean", "multiValued": false,
                "description": "False while the person is suspended; every person has it (a \
                    create without it makes an active person)",
                "required": true,
                "mutability": "readWrite", "returned": "default",
            },
            {
                "name": "groups", "type": "complex", "multiValued": true,
                "description": "The groups of the token's scope the person belongs to; changed \
                    through the Group resource only",
                "required": false, "mutability": "readOnly", "returned": "default",
                "uniqueness": "none",
                "subAttributes": [
                    {
                        "name": "value", "type": "string", "multiValued": false,
                        "description": "The id of the Group", "required": false,
                        "caseExact": true, "mutability": "readOnly", "returned": "default",
                        "uniqueness": "none",
                    },
                    {
                        "name": "$ref", "type": "reference", "referenceTypes": ["Group"],
                        "multiValued": false, "description": "The URI of the Group",
                        "required": false, "caseExact": true, "mutability": "readOnly",
                        "returned": "default", "uniqueness": "none",
                    },
                    {
                        "name": "display", "type": "string", "multiValued": false,
                        "description": "The Group's displayName", "required": false,
                        "caseExact": false, "mutability": "readOnly", "returned": "default",
                        "uniqueness": "none",
                    },
                    {
                        "name": "type", "type": "string", "multiValued": false,
                        "description": "Always direct (groups do not nest)", "required": false,
                        "caseExact": false, "canonicalValues": ["direct"],
                        "mutability": "readOnly", "returned": "default", "uniqueness": "none",
                    },
                ],
            },
        ],
        "meta": {"resourceType": "Schema", "location": format!("{base}/Schemas/{USER}")},
    })
}

/// The enterprise User extension (RFC 7643 §4.3): strings the directory owns, shown back as
/// given; of `manager`, `value` is stored (`displayName` and `$ref` are not).
pub fn enterprise_schema(base: &str) -> Value {
    let text =
        |name: &str, description: &str| attribute(name, description, false, "none", "readWrite");
    let mut manager_value = text("value", "The directory's id of the person's manager");
    manager_value["caseExact"] = json!(true);
    json!({
        "schemas": [SCHEMA],
        "id": ENTERPRISE,
        "name": "EnterpriseUser",
        "description": "Enterprise User",
        "attributes": [
            text("employeeNumber", "Numeric or alphanumeric identifier assigned to a person"),
            text("costCenter", "Name of a cost center"),
            text("organization", "Name of an organization"),
            text("division", "Name of a division"),
            text("department", "Name of a department"),
            {
                "name": "manager", "type": "complex", "multiValued": false,
                "description": "The person's manager", "required": false,
                "mutability": "readWrite", "returned": "default", "uniqueness": "none",
                "subAttributes": [manager_value],
            },
        ],
        "meta": {"resourceType": "Schema", "location": format!("{base}/Schemas/{ENTERPRISE}")},
    })
}

/// The core Group schema as this service supports it (RFC 7643 §7, §4.2): members are people.
pub fn group_schema(base: &str) -> Value {
    let mut external = attribute(
        "externalId",
        "The directory's own identifier of the group",
        false,
        "none",
        "readWrite",
    );
    external["caseExact"] = json!(true);
    let mut value = attribute("value", "The id of a User", false, "none", "immutable");
    value["caseExact"] = json!(true);
    json!({
        "schemas": [SCHEMA],
        "id": GROUP,
        "name": "Group",
        "description": "A group of people",
        "attributes": [
            attribute("displayName", "The group's name, unique in its scope ignoring case",
                true, "server", "readWrite"),
            external,
            {
                "name": "members", "type": "complex", "multiValued": true,
                "description": "The people in the group (groups do not nest)",
                "required": false, "mutability": "readWrite", "returned": "default",
                "uniqueness": "none",
                "subAttributes": [
                    value,
                    {
                        "name": "$ref", "type": "reference", "referenceTypes": ["User"],
                        "multiValued": false, "description": "The URI of the User",
                        "required": false, "caseExact": true, "mutability": "immutable",
                        "returned": "default", "uniqueness": "none",
                    },
                    {
                        "name": "type", "type": "string", "multiValued": false,
                        "description": "Always User", "required": false, "caseExact": false,
                        "canonicalValues": ["User"], "mutability": "immutable",
                        "returned": "default", "uniqueness": "none",
                    },
                ],
            },
        ],
        "meta": {"resourceType": "Schema", "location": format!("{base}/Schemas/{GROUP}")},
    })
}

/// `/Schemas` as a ListResponse.
pub fn schemas(base: &str) -> Value {
    list(vec![
        user_schema(base),
        enterprise_schema(base),
        group_schema(base),
    ])
}

fn list(resources: Vec<Value>) -> Value {
    json!({
        "schemas": [LIST],
        "totalResults": resources.len(),
        "startIndex": 1,
        "itemsPerPage": resources.len(),
        "Resources": resources,
    })
}

/// The schema `id`, if this service has it.
pub fn schema(base: &str, id: &str) -> Option<Value> {
    if id.eq_ignore_ascii_case(USER) {
        Some(user_schema(base))
    } else if id.eq_ignore_ascii_case(ENTERPRISE) {
        Some(enterprise_schema(base))
    } else if id.eq_ignore_ascii_case(GROUP) {
        Some(group_schema(base))
    } else {
        None
    }
}

/// The resource type `id`, if this service has it.
pub fn resource_type(base: &str, id: &str) -> Option<Value> {
    match id {
        "User" => Some(user_resource_type(base)),
        "Group" => Some(group_resource_type(base)),
        _ => None,
    }
}
