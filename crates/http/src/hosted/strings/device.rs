//! The texts of the device verification page (`/oauth/device/verify`, RFC 8628 §3.3) and of the
//! consent page when it answers a device, one catalogue per language like [`super::Strings`],
//! which reaches them as `device`. No value is formatted into these texts: the page inserts the
//! user code and the application's name (escaped) beside them.

/// One language's device texts.
#[derive(Debug)]
pub struct DeviceStrings {
    /// Title of the page where the code is typed.
    pub title: &'static str,
    /// What the page is for.
    pub intro: &'static str,
    /// Label of the code field.
    pub code_label: &'static str,
    /// Under the code field.
    pub code_hint: &'static str,
    /// The button that looks the code up.
    pub submit: &'static str,
    /// A code that is unknown, expired or already used (one answer for all).
    pub unknown: &'static str,
    /// Too many wrong codes from this address.
    pub too_many: &'static str,
    /// On the consent page of a device's request, before the user code.
    pub consent_check: &'static str,
    /// After the user code on the consent page.
    pub consent_warning: &'static str,
    /// Title of the page after approval.
    pub approved_title: &'static str,
    /// After approval.
    pub approved: &'static str,
    /// Title of the page after the person declined or the request was refused.
    pub refused_title: &'static str,
    /// The person declined: the device is told.
    pub declined: &'static str,
    /// The request could not be approved for this person (a policy, an organization): the
    /// device still waits, and another account may approve it.
    pub not_approved: &'static str,
}

/// English.
pub(super) static EN: DeviceStrings = DeviceStrings {
    title: "Connect a device",
    intro: "Enter the code shown on your device to let it sign in as you.",
    code_label: "Code",
    code_hint: "8 letters, for example BCDF-GHJK. Upper or lower case, with or without the dash.",
    submit: "Continue",
    unknown: "This code is not valid. Check it on your device: it may have expired.",
    too_many: "Too many wrong codes. Wait a few minutes, then try again.",
    consent_check: "Only continue if you started this on a device you own and it shows the code",
    consent_warning: ". Someone who sent you this code could otherwise use your account.",
    approved_title: "Device connected",
    approved: "Your device is signed in. You can close this page and return to it.",
    refused_title: "Device not connected",
    declined: "You declined. The device was not given access.",
    not_approved: "This device request could not be approved for your account. The device is \
                   still waiting: you may sign in with another account and enter the code again.",
};
